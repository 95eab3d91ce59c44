import type { ChainDefinition } from '../../catalog/chain.js';
import type { Logger } from '../../log.js';
import { BroadcastRejectedError, type BroadcastPurpose, type BroadcastRefusal, type ChainGateway, type TransactionStatus } from '../gateway.js';
import type { StuckTransactions } from './stuck.js';

/** A transaction the service signed and recorded before sending it. */
export interface RecordedTransaction {
  txHash: string;
  raw: string;
  nonce: number | null;
  from?: string;
}

/**
 * Where a recorded payment stands. Only proof ends it as `failed`: a transaction mined and failed
 * at the chain's depth, or one that can never be mined (`ChainGateway.provablyNever`). Everything
 * else is `sent`: in flight, or unknown (a node that refused or did not answer), followed again
 * with the same bytes.
 */
export type Followed =
  /**
   * `inMempool`: seen pending by this look (what a replace-by-fee rule waits on); `deepAtHead`: it
   * is mined, not yet as deep as the chain asks, and will be once the chain's head reaches this block
   */
  | { kind: 'sent'; inMempool: boolean; deepAtHead?: number }
  | { kind: 'confirmed'; txHash: string; blockNumber: number; fee: bigint }
  /** `feePaid`: what the chain took for it anyway (a reverted transaction's fee, or its cancellation's) */
  | { kind: 'failed'; error: string; feePaid: bigint }
  /** the node refuses the transaction on its own merits: not failed until it is made impossible (a cancellation) or expires */
  | { kind: 'refused'; error: string };

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
  /** where transactions whose outcome stays unknown too long are reported */
  stuck?: StuckTransactions;
}

export type SendOutcome = { kind: 'accepted' } | { kind: 'refused'; refusal: BroadcastRefusal; error: string };

/**
 * Sends a recorded transaction's bytes (logged, then the crash-test hook). `purpose` tells a
 * devnet whether its withdrawal faults apply.
 */
export const sendRecorded = async (services: FollowServices, transaction: RecordedTransaction, purpose?: BroadcastPurpose): Promise<SendOutcome> => {
  try {
    await services.gateway.broadcast(transaction.raw, purpose ? { purpose } : undefined);
  } catch (error) {
    if (error instanceof BroadcastRejectedError) return { kind: 'refused', refusal: error.refusal, error: error.message };
    throw error;
  }
  services.logger.info('transaction broadcast', { chainId: services.chain.id, txHash: transaction.txHash, from: transaction.from, nonce: transaction.nonce });
  await services.faults?.afterBroadcast?.(transaction.txHash);
  return { kind: 'accepted' };
};

type Mined = Extract<TransactionStatus, { status: 'confirmed' | 'failed' }>;

/** A mined transaction settles only once it is as deep as the chain asks, failed or not: a reorg can still undo either. */
const settled = (chain: ChainDefinition, txHash: string, status: Mined): Followed => {
  if (status.confirmations < chain.properties.confirmations) {
    return status.blockNumber === null ? { kind: 'sent', inMempool: false } : { kind: 'sent', inMempool: false, deepAtHead: status.blockNumber + chain.properties.confirmations - 1 };
  }
  return status.status === 'failed' ? { kind: 'failed', error: status.error, feePaid: status.fee } : { kind: 'confirmed', txHash, blockNumber: status.blockNumber, fee: status.fee };
};

const isMined = (status: TransactionStatus): status is Mined => status.status === 'confirmed' || status.status === 'failed';

export interface FollowedTransactions {
  /** the transaction sent now */
  current: RecordedTransaction;
  /** transactions it replaced (Bitcoin replace-by-fee), oldest first: any of them may be the one mined */
  replaced?: readonly RecordedTransaction[];
  /**
   * a transaction of ours that makes `current` impossible (it takes its nonce or an input), once the
   * node refused `current`: asked only when `current` is neither in the mempool nor mined (the
   * common look, a payment pending or being confirmed, reads nothing more)
   */
  cancellation?: () => Promise<RecordedTransaction | null>;
  purpose?: BroadcastPurpose;
  /**
   * `current` was recorded by the caller's own step just now and never sent (and replaces none):
   * no node knows it yet and nothing can prove yet that it will never be mined (what it spends was
   * free when it was signed), so its first look sends it without asking the node where it stands
   */
  unsent?: boolean;
}

const NOT_SENT_YET: TransactionStatus = { status: 'not_found' };

/**
 * Where a recorded payment stands, sending its recorded bytes when the node does not know them
 * (never sent because of a crash, dropped by a reorg, or lost on the way). Never signs anything:
 * a crash anywhere cannot make a second payment. Whichever of its transactions is mined pays it.
 */
export const followRecorded = async (services: FollowServices, transactions: FollowedTransactions): Promise<Followed> => {
  const followed = await followOnce(services, transactions);
  services.stuck?.observe(services.chain.id, transactions.current.txHash, followed.kind === 'sent' || followed.kind === 'refused');
  return followed;
};

const followOnce = async (services: FollowServices, { current, replaced = [], cancellation: recordedCancellation, purpose, unsent = false }: FollowedTransactions): Promise<Followed> => {
  const { gateway, chain } = services;
  const status = unsent ? NOT_SENT_YET : await gateway.transactionStatus(current.txHash);
  if (status.status === 'pending') return { kind: 'sent', inMempool: true };
  if (isMined(status)) return settled(chain, current.txHash, status);

  // newest first: a transaction the current one replaced may have been mined first (a race)
  const earlier = [...replaced].reverse();
  const earlierStatus = new Map<string, TransactionStatus>();
  for (const transaction of earlier) {
    const found = await gateway.transactionStatus(transaction.txHash);
    if (isMined(found)) return settled(chain, transaction.txHash, found);
    earlierStatus.set(transaction.txHash, found);
  }
  const cancellation = (await recordedCancellation?.()) ?? null;
  const cancellationStatus = cancellation ? await gateway.transactionStatus(cancellation.txHash) : null;

  // none of ours is in a block, nor (but a replaced one) in the mempool: can any of them still be?
  const anyPending = [...earlierStatus.values()].some((found) => found.status === 'pending');
  if (!anyPending && !unsent) {
    const proofs: (string | null)[] = [];
    for (const transaction of [current, ...earlier]) proofs.push(await gateway.provablyNever(transaction.raw));
    if (proofs.every((proof) => proof !== null)) return { kind: 'failed', error: `it can never be mined: ${proofs[0]}`, feePaid: 0n };
  }

  const sent = await sendRecorded(services, current, purpose);
  if (sent.kind === 'accepted') return { kind: 'sent', inMempool: false };

  if (earlier.length > 0) {
    // the replacement was refused: a transaction it was to replace may still pay
    services.logger.warn('the node refused the replacement; following the transaction it replaces', { chainId: chain.id, txHash: current.txHash, refusal: sent.error });
    for (const transaction of earlier) {
      if (earlierStatus.get(transaction.txHash)?.status === 'pending') return { kind: 'sent', inMempool: true };
      if ((await sendRecorded(services, transaction, purpose)).kind === 'accepted') return { kind: 'sent', inMempool: false };
    }
  }
  if (cancellation) {
    // being made impossible: the cancellation is followed (and re-sent) until the proof above holds
    if (cancellationStatus?.status === 'not_found') await sendRecorded(services, cancellation);
    return { kind: 'sent', inMempool: false };
  }
  if (sent.refusal !== 'invalid') {
    services.logger.info('the node did not take the transaction; its outcome is unknown, it is followed and sent again', { chainId: chain.id, txHash: current.txHash, refusal: sent.refusal, error: sent.error });
    return { kind: 'sent', inMempool: false };
  }
  return { kind: 'refused', error: `the node refused the transaction: ${sent.error}` };
};
