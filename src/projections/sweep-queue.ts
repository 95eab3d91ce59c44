import { sql, type Transaction } from 'kysely';
import { sessionWrite } from '../db/session-transaction.js';
import { findChain } from '../catalog/registry.js';
import type { Database } from '../db/database.js';
import type { DepositEvent } from '../domain/deposit/deposit.js';
import type { SweepEvent } from '../domain/sweep/sweep.js';
import { streamCategories } from '../domain/streams.js';
import type { EventBody } from '../eventstore/port.js';
import type { Projection } from './projection.js';

export const SWEEP_QUEUE_PROJECTION = 'sweepQueue';

/** Only account chains with gas wallets sweep: Bitcoin outputs stay with the signer, XRP needs no sweep. */
export const isSweptChain = (chainId: string): boolean => {
  const family = findChain(chainId)?.family;
  return family === 'evm' || family === 'tron';
};

/** the events a sweep ends with (TERMINAL_SWEEP_STATUSES), and when */
const SWEEP_END_TYPES: readonly string[] = ['SweepConfirmed', 'SweepSkipped', 'SweepFailed'] satisfies SweepEnd['type'][];
type SweepEnd = Extract<SweepEvent, { type: 'SweepConfirmed' | 'SweepSkipped' | 'SweepFailed' }>;
const isSweepEnd = (event: { type: string }): event is SweepEnd => SWEEP_END_TYPES.includes(event.type);
const endedAt = (event: SweepEnd): string =>
  event.type === 'SweepConfirmed' ? event.data.confirmedAt : event.type === 'SweepSkipped' ? event.data.skippedAt : event.data.failedAt;

/** The batch's credited, swept deposits in one insert (a deposit already queued keeps its row), then the sweeps that ended closed. */
const handleBatch = async (trx: Transaction<Database>, batch: EventBody[]): Promise<void> => {
  const queued = new Map<string, { chainId: string; txHash: string; index: number; seq: string; at: Date }>();
  const ended: { chainId: string; txHash: string; index: number; at: Date }[] = [];
  for (const recorded of batch) {
    const event = { type: recorded.type, data: recorded.data } as DepositEvent | SweepEvent;
    if (isSweepEnd(event)) {
      const { chainId, txHash, index } = event.data;
      ended.push({ chainId, txHash, index, at: new Date(endedAt(event)) });
      continue;
    }
    if (event.type !== 'DepositConfirmed' || !event.data.credited || !isSweptChain(event.data.chainId)) continue;
    const { chainId, txHash, index, confirmedAt } = event.data;
    const key = JSON.stringify([chainId, txHash, index]);
    // the first confirmation in the batch wins, as the first of successive inserts did
    if (!queued.has(key)) queued.set(key, { chainId, txHash, index, seq: recorded.position.toString(), at: new Date(confirmedAt) });
  }
  const rows = [...queued.values()];
  if (rows.length > 0)
    await sessionWrite(
      trx,
      sql`
      insert into sweep_queue (chain_id, tx_hash, output_index, seq, queued_at, done_at)
      select chain_id, tx_hash, output_index, seq, at, null
      from unnest(${rows.map((row) => row.chainId)}::text[], ${rows.map((row) => row.txHash)}::text[], ${rows.map((row) => row.index)}::int[],
                  ${rows.map((row) => row.seq)}::bigint[], ${rows.map((row) => row.at)}::timestamptz[])
           as row (chain_id, tx_hash, output_index, seq, at)
      on conflict (chain_id, tx_hash, output_index) do nothing
    `,
    );
  // a sweep stream ends once; its queue row came from the deposit's earlier confirmation
  if (ended.length > 0)
    await sessionWrite(
      trx,
      sql`
      update sweep_queue set done_at = ended.at
      from unnest(${ended.map((row) => row.chainId)}::text[], ${ended.map((row) => row.txHash)}::text[], ${ended.map((row) => row.index)}::int[],
                  ${ended.map((row) => row.at)}::timestamptz[])
           as ended (chain_id, tx_hash, output_index, at)
      where sweep_queue.chain_id = ended.chain_id and sweep_queue.tx_hash = ended.tx_hash and sweep_queue.output_index = ended.output_index
        and sweep_queue.done_at is null
    `,
    );
};

/**
 * Every credited DepositConfirmed on an EVM or Tron chain becomes one row of the sweep queue, in the
 * projection's batch transaction and keyed by the deposit: exactly once. The sweep's final event
 * closes the row. Nothing else writes it (the sweeper's retry schedule is its own table,
 * `sweep_attempts`), so a rebuild gives the same rows.
 */
export const sweepQueueProjection: Projection = {
  name: SWEEP_QUEUE_PROJECTION,
  filter: { categories: [streamCategories.deposit, streamCategories.sweep], types: ['DepositConfirmed', ...SWEEP_END_TYPES] },
  tables: ['sweep_queue'],
  handle: (trx, recorded) => handleBatch(trx, [recorded]),
  handleBatch,
};
