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

/**
 * Three plain reads joined here, not one join in SQL: the events' JSON fields give the planner no
 * estimate, and a single statement became a nested loop over every pair of deposits (minutes for
 * 5,000, once the events table had no index on its type to guess with).
 */
const detectedQuery = `
  select data->>'chainId' as "chainId", data->>'txHash' as "txHash", data->>'index' as "index", (data->>'blockNumber')::int as "blockNumber"
  from eventstore.events where position > $1 and category = 'deposit' and type = 'DepositDetected' and data->>'credit' = 'credit'`;
const confirmedQuery = `
  select data->>'chainId' as "chainId", data->>'txHash' as "txHash", data->>'index' as "index", (extract(epoch from recorded_at - $2::timestamptz) * 1000)::float8 as "ms"
  from eventstore.events where position > $1 and category = 'deposit' and type = 'DepositConfirmed'`;
const blocksQuery = `
  select chain_id as "chainId", number, (extract(epoch from timestamp - $1::timestamptz) * 1000)::float8 as "ms"
  from devnet_blocks where timestamp >= $1::timestamptz - interval '1 minute'`;

const depositKey = (row: { chainId: string; txHash: string; index: string }) => `${row.chainId}|${row.txHash}|${row.index}`;

/**
 * Each creditable deposit detected after `position` (the store's head before the first injection,
 * made at `startedAt`) that is credited by now, on a chain of `confirmations` (chain → the depth a
 * credit waits for): its credit delay after its depth; null when none is.
 */
export const creditDelays = async (read: ReadRows, position: bigint, startedAt: Date, confirmations: ReadonlyMap<string, number>): Promise<CreditDelays | null> => {
  const [detected, confirmed, blocks] = await Promise.all([
    read<{ chainId: string; txHash: string; index: string; blockNumber: number }>(detectedQuery, [position.toString()]),
    read<{ chainId: string; txHash: string; index: string; ms: number }>(confirmedQuery, [position.toString(), startedAt]),
    read<{ chainId: string; number: number; ms: number }>(blocksQuery, [startedAt]),
  ]);
  const creditMs = new Map(confirmed.map((row) => [depositKey(row), row.ms]));
  const blockMs = new Map(blocks.map((block) => [`${block.chainId}|${block.number}`, block.ms]));
  const rows = detected.flatMap((deposit) => {
    const required = confirmations.get(deposit.chainId);
    const credit = creditMs.get(depositKey(deposit));
    const depth = required === undefined ? undefined : blockMs.get(`${deposit.chainId}|${deposit.blockNumber + required - 1}`);
    return credit === undefined || depth === undefined ? [] : [{ depthMs: depth, creditMs: credit }];
  });
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

