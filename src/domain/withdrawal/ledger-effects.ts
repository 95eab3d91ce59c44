import type { LedgerCommand } from '../ledger/decide.js';
import { evolveWithdrawal, type Withdrawal, type WithdrawalEvent, type WithdrawalRecord } from './withdrawal.js';

/** the network fee a withdrawal holds beside its amount (0 for one signed before fees were held) */
export const feeHeldBy = (withdrawal: Withdrawal): bigint => (withdrawal.status === 'None' ? 0n : BigInt(withdrawal.feeHeld ?? '0'));

/**
 * What a withdrawal's new events do to its ledger, two-phase (hold / post / release):
 * - signing or replacing its transaction with a higher fee held (Bitcoin, XRP) holds the increase;
 * - completing posts the amount and releases the fee held (the fee the chain took is then charged
 *   by the caller, in the same append: the difference goes back to available);
 * - cancelling or failing releases all it holds, amount and fee.
 * A withdrawal whose events carry no `feeHeld` (signed before fees were held, or an EVM/Tron one)
 * holds its amount alone, as it always did.
 */
export const ledgerCommandsFor = (before: Withdrawal, events: readonly WithdrawalEvent[]): LedgerCommand[] => {
  const commands: LedgerCommand[] = [];
  let state = before;
  for (const event of events) {
    const after = evolveWithdrawal(state, event) as WithdrawalRecord;
    const ledger = { orgId: after.orgId, tokenId: after.tokenId, withdrawalId: after.id };
    const amount = BigInt(after.amount);
    const fee = feeHeldBy(after);
    const raised = fee - feeHeldBy(state);
    switch (event.type) {
      case 'WithdrawalTransactionSigned':
      case 'WithdrawalTransactionReplaced':
        if (raised > 0n) commands.push({ type: 'HoldFunds', ...ledger, amount: raised });
        break;
      case 'WithdrawalCompleted':
        commands.push({ type: 'PostHold', ...ledger, amount });
        if (fee > 0n) commands.push({ type: 'ReleaseHold', ...ledger, amount: fee });
        break;
      case 'WithdrawalCancelled':
      case 'WithdrawalFailed':
        commands.push({ type: 'ReleaseHold', ...ledger, amount: amount + fee });
        break;
      default:
        break;
    }
    state = after;
  }
  return commands;
};
