import { decideOnLoaded, loadAggregate, type CommandMetadata, type CommandServices } from '../application/command-handler.js';
import { signCancellation, type CancellationSender } from '../chains/transfers/cancellation.js';
import { followRecorded, sendRecorded, type Followed, type FollowedTransactions, type FollowServices } from '../chains/transfers/follow.js';
import type { Signer } from '../chains/signer/signer.js';
import { cancellationDecider, type Cancellation, type CancellationEvent } from '../domain/cancellation/cancellation.js';
import { streams } from '../domain/streams.js';

export interface SettlementServices extends FollowServices, CommandServices {
  signer: Signer;
}

/** What a payment's owner knows about it: whose it is, who may cancel it, who acts. */
export interface PaymentOwner {
  orgId: string;
  /** asked only when a cancellation must be signed */
  sender: () => Promise<CancellationSender>;
  metadata: CommandMetadata;
}

/** A settled look: `refused` never leaves this module, it is turned into a cancellation. */
export type Settlement = Exclude<Followed, { kind: 'refused' }>;

/**
 * One look at a recorded payment (a withdrawal's transaction, a sweep's, a gas top-up), applying
 * the rule: only proof fails it. When a node refuses the transaction on its own merits, the
 * transaction is made impossible first: a cancellation is signed, recorded before it is sent, and
 * followed beside it; the payment fails once the chain proves at depth that it can never be mined
 * (and completes instead if the chain mines it after all).
 */
export const settle = async (services: SettlementServices, transactions: Omit<FollowedTransactions, 'cancellation'>, owner: PaymentOwner): Promise<Settlement> => {
  const { chain, store } = services;
  const stream = streams.cancellation(chain.id, transactions.current.txHash);
  // the cancellation's stream is read once, and only when the look needs it: a payment in the
  // mempool or mined (most looks) has none that matters, so its look costs no read of the store
  let loading: ReturnType<typeof loadAggregate<CancellationEvent, Cancellation>> | null = null;
  const load = () => (loading ??= loadAggregate(store, stream, cancellationDecider));
  const recordedCancellation = async () => {
    const { state } = await load();
    return state.status === 'Signed' ? state : null;
  };
  const followed = await followRecorded(services, { ...transactions, cancellation: async () => (await recordedCancellation())?.cancellation ?? null });
  if (followed.kind === 'failed') {
    const recorded = await recordedCancellation();
    if (!recorded) return followed;
    // the cancellation was mined in its place: its fee is what the chain took
    const cancelled = await services.gateway.transactionStatus(recorded.cancellation.txHash);
    const feePaid = cancelled.status === 'confirmed' || cancelled.status === 'failed' ? cancelled.fee : 0n;
    return { kind: 'failed', error: `${recorded.refusal}; ${followed.error}`, feePaid };
  }
  if (followed.kind !== 'refused') return followed;
  const loaded = await load();

  const cancellation = signCancellation(chain, services.signer, transactions.current, await owner.sender());
  if (!cancellation) {
    services.logger.warn('the node refused a transaction; it stays followed until it expires or the chain decides', { chainId: chain.id, txHash: transactions.current.txHash, error: followed.error });
    return { kind: 'sent', inMempool: false };
  }
  const command = { type: 'SignCancellation' as const, orgId: owner.orgId, chainId: chain.id, txHash: transactions.current.txHash, refusal: followed.error, cancellation };
  const events = await decideOnLoaded(services, stream, cancellationDecider, loaded, command, owner.metadata);
  for (const event of events) await services.faults?.afterRecord?.(event.type);
  services.logger.warn('the node refused a transaction; a cancellation takes what it spends, so it can never be mined', {
    chainId: chain.id,
    txHash: transactions.current.txHash,
    cancellation: cancellation.txHash,
    error: followed.error,
  });
  await sendRecorded(services, cancellation);
  return { kind: 'sent', inMempool: false };
};
