import { findChain } from '../chains/registry.js';
import type { DepositEvent } from '../domain/deposit/deposit.js';
import { streamCategories } from '../domain/streams.js';
import type { Projection } from './projection.js';

export const SWEEP_QUEUE_PROJECTION = 'sweepQueue';

/** Only account chains with gas wallets sweep: Bitcoin outputs stay with the signer, XRP needs no sweep. */
export const isSweptChain = (chainId: string): boolean => {
  const family = findChain(chainId)?.family;
  return family === 'evm' || family === 'tron';
};

/**
 * Every credited DepositConfirmed on an EVM or Tron chain becomes one row of the sweep queue, in the
 * projection's batch transaction and keyed by the deposit: exactly once, and a rebuild gives the same
 * rows back (the sweeper then finds the finished ones finished in their streams).
 */
export const sweepQueueProjection: Projection = {
  name: SWEEP_QUEUE_PROJECTION,
  filter: { categories: [streamCategories.deposit], types: ['DepositConfirmed'] },
  tables: ['sweep_queue'],
  handle: async (trx, recorded) => {
    const event = { type: recorded.type, data: recorded.data } as DepositEvent;
    if (event.type !== 'DepositConfirmed' || !event.data.credited || !isSweptChain(event.data.chainId)) return;
    const { chainId, txHash, index, confirmedAt } = event.data;
    const at = new Date(confirmedAt);
    await trx
      .insertInto('sweep_queue')
      .values({ chain_id: chainId, tx_hash: txHash, output_index: index, seq: recorded.position.toString(), queued_at: at, next_attempt_at: at, attempts: 0, done_at: null })
      .onConflict((conflict) => conflict.columns(['chain_id', 'tx_hash', 'output_index']).doNothing())
      .execute();
  },
};
