import type pg from 'pg';
import { perSecond, summarize, type LatencySummary } from './stats.js';

/** Rows of one read of the service's database (a ServiceDb's query, or a pg client's rows). */
export type ReadRows = <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => Promise<R[]>;

/**
 * The part of a deposit's way the service controls: from the moment its chain's required depth was
 * reached (the block `confirmations − 1` above its own was mined: from then on it may be credited)
 * until its credit was appended (DepositConfirmed, with the ledger's credit in the same append).
 * The end-to-end figure also holds the injection and the chains' depth waits, which are the
 * devnet's; this one holds only the watcher's detection and confirmation and the ledger's append.
 */
export interface CreditDelays {
  /** per credited deposit: credit appended − depth reached (ms) */
  delay: LatencySummary;
  /** ms after the first injection: the first deposit's depth reached, the last one's, the last credit */
  firstDepthMs: number;
  lastDepthMs: number;
  lastCreditMs: number;
  /** deposits ÷ (last credit − first depth reached): what the service credits a second once deposits are confirmable */
  creditedPerSecond: number;
}

const creditTimesQuery = `
  with depth as (
    select chain_id, confirmations from jsonb_to_recordset($2::jsonb) as depth(chain_id text, confirmations int)
  ), detected as (
    select data->>'chainId' as chain_id, data->>'txHash' as tx_hash, data->>'index' as output_index, (data->>'blockNumber')::int as block_number
    from eventstore.events where position > $1 and type = 'DepositDetected' and data->>'credit' = 'credit'
  ), confirmed as (
    select data->>'chainId' as chain_id, data->>'txHash' as tx_hash, data->>'index' as output_index, recorded_at
    from eventstore.events where position > $1 and type = 'DepositConfirmed'
  )
  select (extract(epoch from block.timestamp - $3::timestamptz) * 1000)::float8 as "depthMs",
         (extract(epoch from confirmed.recorded_at - $3::timestamptz) * 1000)::float8 as "creditMs"
  from detected
  join depth using (chain_id)
  join confirmed using (chain_id, tx_hash, output_index)
  join devnet_blocks as block on block.chain_id = detected.chain_id and block.number = detected.block_number + depth.confirmations - 1`;

/**
 * Each creditable deposit detected after `position` (the store's head before the first injection,
 * made at `startedAt`) that is credited by now, on a chain of `confirmations` (chain → the depth a
 * credit waits for): its credit delay after its depth; null when none is.
 */
export const creditDelays = async (read: ReadRows, position: bigint, startedAt: Date, confirmations: ReadonlyMap<string, number>): Promise<CreditDelays | null> => {
  const depth = [...confirmations].map(([chainId, required]) => ({ chain_id: chainId, confirmations: required }));
  const rows = await read<{ depthMs: number; creditMs: number }>(creditTimesQuery, [position.toString(), JSON.stringify(depth), startedAt]);
  if (rows.length === 0) return null;
  const firstDepthMs = Math.min(...rows.map((row) => row.depthMs));
  const lastCreditMs = Math.max(...rows.map((row) => row.creditMs));
  return {
    delay: summarize(rows.map((row) => row.creditMs - row.depthMs)),
    firstDepthMs,
    lastDepthMs: Math.max(...rows.map((row) => row.depthMs)),
    lastCreditMs,
    creditedPerSecond: perSecond(rows.length, lastCreditMs - firstDepthMs),
  };
};

