import { sql, type Transaction } from 'kysely';
import { findChain } from '../catalog/registry.js';
import type { Database } from '../db/database.js';
import type { DepositEvent } from '../domain/deposit/deposit.js';
import { streamCategories } from '../domain/streams.js';
import type { RecordedEvent } from '../eventstore/port.js';
import type { Projection } from './projection.js';

export const SWEEP_QUEUE_PROJECTION = 'sweepQueue';

/** Only account chains with gas wallets sweep: Bitcoin outputs stay with the signer, XRP needs no sweep. */
export const isSweptChain = (chainId: string): boolean => {
  const family = findChain(chainId)?.family;
  return family === 'evm' || family === 'tron';
};

/** The batch's credited, swept deposits in one insert; a deposit already queued keeps its row (as each insert's DO NOTHING did). */
const handleBatch = async (trx: Transaction<Database>, batch: RecordedEvent[]): Promise<void> => {
  const queued = new Map<string, { chainId: string; txHash: string; index: number; seq: string; at: Date }>();
  for (const recorded of batch) {
    const event = { type: recorded.type, data: recorded.data } as DepositEvent;
    if (event.type !== 'DepositConfirmed' || !event.data.credited || !isSweptChain(event.data.chainId)) continue;
    const { chainId, txHash, index, confirmedAt } = event.data;
    const key = JSON.stringify([chainId, txHash, index]);
    // the first confirmation in the batch wins, as the first of successive inserts did
    if (!queued.has(key)) queued.set(key, { chainId, txHash, index, seq: recorded.position.toString(), at: new Date(confirmedAt) });
  }
  if (queued.size === 0) return;
  const rows = [...queued.values()];
  await sql`
    insert into sweep_queue (chain_id, tx_hash, output_index, seq, queued_at, next_attempt_at, attempts, done_at)
    select chain_id, tx_hash, output_index, seq, at, at, 0, null
    from unnest(${rows.map((row) => row.chainId)}::text[], ${rows.map((row) => row.txHash)}::text[], ${rows.map((row) => row.index)}::int[],
                ${rows.map((row) => row.seq)}::bigint[], ${rows.map((row) => row.at)}::timestamptz[])
         as row (chain_id, tx_hash, output_index, seq, at)
    on conflict (chain_id, tx_hash, output_index) do nothing
  `.execute(trx);
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
  handle: (trx, recorded) => handleBatch(trx, [recorded]),
  handleBatch,
};
