import type { DecideContext, Decider } from '../decider.js';
import type { DepositRef } from '../deposit/deposit.js';
import { DomainError } from '../../errors.js';
import { addBalances, balanceChangeOf, balancesToData, evolveLedger, isNonNegative, ZERO, type Balances, type FeeReason, type LedgerEvent, type LedgerState } from './ledger.js';

/** Every command names its ledger (organization and token) and a positive amount in base units. */
interface LedgerCommandBase {
  orgId: string;
  tokenId: string;
  amount: bigint;
}

export type LedgerCommand =
  | ({ type: 'AddPendingDeposit'; deposit: DepositRef } & LedgerCommandBase)
  | ({ type: 'RevertPendingDeposit'; deposit: DepositRef } & LedgerCommandBase)
  | ({ type: 'CreditDeposit'; deposit: DepositRef } & LedgerCommandBase)
  | ({ type: 'ChargeFee'; reason: FeeReason; reference: string } & LedgerCommandBase)
  | ({ type: 'HoldFunds'; withdrawalId: string } & LedgerCommandBase)
  | ({ type: 'PostHold'; withdrawalId: string } & LedgerCommandBase)
  | ({ type: 'ReleaseHold'; withdrawalId: string } & LedgerCommandBase);

const eventFor = (command: LedgerCommand, occurredAt: string, balancesAfter: Balances): LedgerEvent => {
  const entry = { orgId: command.orgId, tokenId: command.tokenId, amount: command.amount.toString(), occurredAt, balancesAfter: balancesToData(balancesAfter) };
  switch (command.type) {
    case 'AddPendingDeposit':
      return { type: 'DepositPending', data: { ...entry, deposit: command.deposit } };
    case 'RevertPendingDeposit':
      return { type: 'DepositPendingReverted', data: { ...entry, deposit: command.deposit } };
    case 'CreditDeposit':
      return { type: 'DepositCredited', data: { ...entry, deposit: command.deposit } };
    case 'ChargeFee':
      return { type: 'FeeCharged', data: { ...entry, reason: command.reason, reference: command.reference } };
    case 'HoldFunds':
      return { type: 'FundsHeld', data: { ...entry, withdrawalId: command.withdrawalId } };
    case 'PostHold':
      return { type: 'HoldPosted', data: { ...entry, withdrawalId: command.withdrawalId } };
    case 'ReleaseHold':
      return { type: 'HoldReleased', data: { ...entry, withdrawalId: command.withdrawalId } };
    default: {
      const _never: never = command;
      throw new Error('unknown ledger command');
    }
  }
};

/**
 * A ledger command becomes one event, if the balances it leaves are all non-negative. A fee the
 * available balance cannot pay is INSUFFICIENT_BALANCE (422); a deposit movement that would drive
 * `pending` negative means the caller lost track of a deposit, which is a bug, not a refusal.
 * Whether a deposit was already counted is the deposit stream's guard (appended atomically with
 * these events), so the ledger keeps no per-deposit index that would grow forever.
 */
export const decideLedger = (command: LedgerCommand, state: LedgerState, { now }: DecideContext): LedgerEvent[] => {
  if (command.amount <= 0n) throw new DomainError('INVALID_AMOUNT', 'a ledger amount is a positive integer of base units');
  const at = now.toISOString();
  // the change does not depend on balancesAfter: compute it, then state the balances it leaves
  const after = addBalances(state, balanceChangeOf(eventFor(command, at, state)));
  if (isNonNegative(after)) return [eventFor(command, at, after)];
  // a fee or a hold the available balance cannot cover is the caller's refusal; anything else
  // (posting or releasing more than is held) means a withdrawal lost track of its hold: a bug
  if (command.type === 'ChargeFee' || command.type === 'HoldFunds') {
    throw new DomainError('INSUFFICIENT_BALANCE', `the available balance of ${command.tokenId} cannot ${command.type === 'ChargeFee' ? 'pay this fee' : 'cover this withdrawal'}`, {
      tokenId: command.tokenId,
      available: state.available.toString(),
      required: command.amount.toString(),
    });
  }
  throw new DomainError('LEDGER_INCONSISTENT', `${command.type} of ${command.amount} would make the ${command.tokenId} ledger negative`, {
    tokenId: command.tokenId,
    pending: state.pending.toString(),
    held: state.held.toString(),
  });
};

export const ledgerDecider: Decider<LedgerCommand, LedgerEvent, LedgerState> = {
  initialState: ZERO,
  evolve: evolveLedger,
  decide: decideLedger,
};
