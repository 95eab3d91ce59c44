import type { SignedTransaction } from '../../domain/withdrawal/withdrawal.js';
import { sendRecorded, settledStatus, type FollowServices } from '../../chains/transfers/follow.js';
import type { TransactionStatus } from '../../chains/gateway.js';

/**
 * Where a withdrawal's recorded transaction stands, sending the recorded bytes when the node does
 * not know them (never sent because of a crash, or dropped by a reorg); nothing new is signed here.
 * After a Bitcoin replacement there are several recorded transactions spending the same inputs:
 * the newest is the one sent, and whichever of them confirms pays the withdrawal (only one can).
 * Every broadcast is tagged as a withdrawal's, the only transactions devnet faults are meant for.
 */
export type FollowedWithdrawal =
  /** in the mempool or mined not yet deep enough; `inMempool`: seen there by this look (not sent by it), what the replace-by-fee rule waits on */
  | { kind: 'sent'; inMempool: boolean }
  | { kind: 'confirmed'; txHash: string; blockNumber: number; fee: bigint }
  | { kind: 'failed'; error: string };

type Services = FollowServices;

const settled = (services: Services, txHash: string, status: Extract<TransactionStatus, { status: 'confirmed' | 'failed' }>): FollowedWithdrawal => {
  const standing = settledStatus(services.chain, status);
  return standing.kind === 'confirmed' ? { ...standing, txHash } : standing.kind === 'sent' ? { kind: 'sent', inMempool: false } : standing;
};

/** null when the node took it; its refusal otherwise */
const send = (services: Services, transaction: Pick<SignedTransaction, 'raw' | 'txHash' | 'nonce'>) => sendRecorded(services, transaction, 'withdrawal');

export const followWithdrawalTransaction = async (
  services: Services,
  current: Pick<SignedTransaction, 'raw' | 'txHash' | 'nonce'>,
  replaced: readonly Pick<SignedTransaction, 'raw' | 'txHash' | 'nonce'>[] = [],
): Promise<FollowedWithdrawal> => {
  const { gateway } = services;
  const status = await gateway.transactionStatus(current.txHash);
  if (status.status === 'pending') return { kind: 'sent', inMempool: true };
  if (status.status !== 'not_found') return settled(services, current.txHash, status);

  // newest first: a transaction the current one replaced may have been mined first (a race)
  const earlier = [...replaced].reverse();
  const earlierStatus = new Map<string, TransactionStatus>();
  for (const transaction of earlier) {
    const found = await gateway.transactionStatus(transaction.txHash);
    if (found.status === 'confirmed' || found.status === 'failed') return settled(services, transaction.txHash, found);
    earlierStatus.set(transaction.txHash, found);
  }

  const refusal = await send(services, current);
  if (refusal === null) return { kind: 'sent', inMempool: false };
  if (earlier.length === 0) return { kind: 'failed', error: `the node refused the transaction: ${refusal}` };

  // the replacement was refused: the transaction it was to replace still pays the withdrawal
  services.logger.warn('withdrawal: the node refused the replacement; following the transaction it replaces', { chainId: services.chain.id, txHash: current.txHash, refusal });
  for (const transaction of earlier) {
    // still in the mempool: the rule counts on, so a later replacement can offer more
    if (earlierStatus.get(transaction.txHash)?.status === 'pending') return { kind: 'sent', inMempool: true };
    if ((await send(services, transaction)) === null) return { kind: 'sent', inMempool: false };
  }
  return { kind: 'failed', error: `the node refused the transaction: ${refusal}` };
};
