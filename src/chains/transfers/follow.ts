import type { ChainDefinition } from '../../catalog/chain.js';
import type { SignedStep } from '../../domain/sweep/sweep.js';
import type { Logger } from '../../log.js';
import { BroadcastRejectedError, type BroadcastPurpose, type ChainGateway, type TransactionStatus } from '../gateway.js';

export type Followed = { kind: 'sent' } | { kind: 'confirmed'; blockNumber: number; fee: bigint } | { kind: 'failed'; error: string };

/** Crash-test hooks: run right after an event is appended / a transaction is broadcast; a throw there is a crash. */
export interface TransferFaults {
  afterRecord?(eventType: string): void | Promise<void>;
  afterBroadcast?(txHash: string): void | Promise<void>;
}

export interface FollowServices {
  chain: ChainDefinition;
  gateway: ChainGateway;
  logger: Logger;
  faults?: TransferFaults;
}

/**
 * Sends a recorded transaction's bytes (logged, then the crash-test hook): null when the node took
 * them, the node's refusal otherwise. `purpose` tells a devnet whether its withdrawal faults apply.
 */
export const sendRecorded = async (
  services: FollowServices,
  transaction: Pick<SignedStep, 'txHash' | 'raw' | 'nonce'> & { from?: string },
  purpose?: BroadcastPurpose,
): Promise<string | null> => {
  try {
    await services.gateway.broadcast(transaction.raw, purpose ? { purpose } : undefined);
  } catch (error) {
    if (error instanceof BroadcastRejectedError) return error.message;
    throw error;
  }
  services.logger.info('transaction broadcast', { chainId: services.chain.id, txHash: transaction.txHash, from: transaction.from, nonce: transaction.nonce });
  await services.faults?.afterBroadcast?.(transaction.txHash);
  return null;
};

/** A mined or failed transaction: confirmed only once it is as deep as the chain asks. */
export const settledStatus = (chain: ChainDefinition, status: Extract<TransactionStatus, { status: 'confirmed' | 'failed' }>): Followed => {
  if (status.status === 'failed') return { kind: 'failed', error: status.error };
  return status.confirmations >= chain.properties.confirmations ? { kind: 'confirmed', blockNumber: status.blockNumber, fee: status.fee } : { kind: 'sent' };
};

/**
 * Where a recorded transaction stands; sends its recorded bytes when the node does not know them
 * (never broadcast because of a crash, or dropped by a reorg). Never signs anything new.
 */
export const followSignedTransaction = async (services: FollowServices, step: Pick<SignedStep, 'txHash' | 'raw' | 'nonce'> & { from?: string }): Promise<Followed> => {
  const status = await services.gateway.transactionStatus(step.txHash);
  if (status.status === 'pending') return { kind: 'sent' };
  if (status.status !== 'not_found') return settledStatus(services.chain, status);
  const refusal = await sendRecorded(services, step);
  return refusal === null ? { kind: 'sent' } : { kind: 'failed', error: `the node refused the transaction: ${refusal}` };
};
