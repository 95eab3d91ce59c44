import type { CommandMetadata } from '../../application/command-handler.js';
import { loadAggregate } from '../../application/command-handler.js';
import type { TransactionStatus } from '../../chains/gateway.js';
import { withdrawalDecider } from '../../domain/withdrawal/decide.js';
import { isTerminal } from '../../domain/withdrawal/withdrawal.js';
import { streams } from '../../domain/streams.js';
import { DomainError } from '../../errors.js';
import { completeWithdrawal, failWithdrawal } from './advance.js';
import type { WithdrawalProcessingServices } from './services.js';

export type OperatorOutcome = 'completed' | 'failed';

export interface OperatorDecision {
  outcome: OperatorOutcome;
  /** why, in the operator's words: it goes into the withdrawal's record */
  reason: string;
  /** who decides: the audit trail names them */
  operator: string;
}

/**
 * An operator settles a withdrawal whose transaction stayed without an outcome (reported as stuck),
 * once they know it. The chain is asked first, and has the last word: `failed` is refused while any
 * of the withdrawal's transactions is pending or mined (it can still pay, or did); `completed` only
 * names a transaction the chain shows mined. The decision is appended with the operator as actor.
 */
export const resolveWithdrawal = async (services: WithdrawalProcessingServices, withdrawalId: string, decision: OperatorDecision) => {
  if (decision.reason.trim() === '' || decision.operator.trim() === '') throw new DomainError('BAD_REQUEST', 'a resolution names its operator and its reason');
  const { state: withdrawal } = await loadAggregate(services.store, streams.withdrawal(withdrawalId), withdrawalDecider);
  if (withdrawal.status === 'None') throw new DomainError('WITHDRAWAL_NOT_FOUND', `No withdrawal ${withdrawalId}`, { withdrawalId });
  if (isTerminal(withdrawal.status)) throw new DomainError('WITHDRAWAL_ALREADY_PROCESSED', `withdrawal ${withdrawalId} is ${withdrawal.status} already`);
  const signed = withdrawal.signedTransaction;
  if (!signed) throw new DomainError('WITHDRAWAL_NOT_PENDING', `withdrawal ${withdrawalId} has no transaction yet: cancel it instead`);

  const metadata: CommandMetadata = { actor: `operator:${decision.operator}`, orgId: withdrawal.orgId, credential: 'system', username: decision.operator };
  const ours = [signed, ...(withdrawal.replacedTransactions ?? [])];
  const seen: { txHash: string; status: TransactionStatus }[] = [];
  for (const transaction of ours) seen.push({ txHash: transaction.txHash, status: await services.gateway.transactionStatus(transaction.txHash) });
  const mined = seen.find(({ status }) => status.status === 'confirmed');
  const alive = seen.find(({ status }) => status.status !== 'not_found');

  if (decision.outcome === 'failed') {
    if (alive) throw new DomainError('WITHDRAWAL_NOT_PENDING', `the chain shows ${alive.txHash} ${alive.status.status}: it can still pay, or did; it cannot be resolved as failed`);
    await failWithdrawal(services, withdrawal, `Resolved as failed by ${decision.operator}: ${decision.reason}`, metadata);
  } else {
    if (!mined || mined.status.status !== 'confirmed') throw new DomainError('WITHDRAWAL_NOT_PENDING', 'the chain shows none of its transactions mined: it cannot be resolved as completed');
    await completeWithdrawal(services, withdrawal, mined.txHash, mined.status.blockNumber, mined.status.fee, metadata);
  }
  services.logger.warn('withdrawal resolved by an operator', { withdrawalId, outcome: decision.outcome, operator: decision.operator, reason: decision.reason });
  return (await loadAggregate(services.store, streams.withdrawal(withdrawalId), withdrawalDecider)).state;
};
