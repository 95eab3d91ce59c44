import { findChain } from '../../src/catalog/registry.js';
import { creditDelays, type CreditDelays, type ReadRows } from './deposit-credit-delays.js';

/**
 * Where a batch of deposits is on its way, sampled from the service's database while they travel:
 * detected and confirmed (events in the store after the injection began), listed confirmed by the
 * deposits read model, their webhooks delivered, their sweeps settled. Each stage's time is when
 * its count first reached the deposits injected (webhooks: every delivery of the organization made
 * since, delivered; sweeps: as many settled as were scheduled, once some were: the sweeper schedules
 * them after the credits, so none scheduled yet is not all settled), to the second.
 */
export interface DepositStageTimes {
  detectedMs: number | null;
  confirmedMs: number | null;
  listedMs: number | null;
  webhooksDeliveredMs: number | null;
  sweepsSettledMs: number | null;
  /** at the last sample */
  counts: StageCounts;
}

interface StageCounts {
  detected: number;
  confirmed: number;
  listed: number;
  webhooksMade: number;
  webhooksDelivered: number;
  sweepsScheduled: number;
  sweepsSettled: number;
}

const SAMPLE_MS = 1000;

const countsQuery = `
  select
    (select count(*) from eventstore.events where position > $1 and type = 'DepositDetected')::int as detected,
    (select count(*) from eventstore.events where position > $1 and type = 'DepositConfirmed')::int as confirmed,
    (select count(*) from deposits where org_id = $2 and credit = 'credit' and confirmed and seq > $1)::int as listed,
    (select count(*) from webhook_deliveries where org_id = $2 and seq > $3)::int as "webhooksMade",
    (select count(*) from webhook_deliveries where org_id = $2 and seq > $3 and status = 'delivered')::int as "webhooksDelivered",
    (select count(*) from eventstore.events where position > $1 and type = 'SweepScheduled')::int as "sweepsScheduled",
    (select count(*) from eventstore.events where position > $1 and type in ('SweepConfirmed', 'SweepSkipped', 'SweepFailed'))::int as "sweepsSettled"`;

/**
 * One chain's deposits of the phase, in ms after the first injection: when the block of its last
 * deposit was mined, when its last deposit was detected and confirmed, and the depth that
 * confirmation waited for (the chain's confirmations): a chain's last credit cannot come before its
 * last block plus that many blocks more, whatever the service does.
 */
export interface ChainStage {
  chainId: string;
  deposits: number;
  confirmations: number;
  lastBlockMs: number | null;
  detectedMs: number | null;
  confirmedMs: number | null;
}

const chainStagesQuery = `
  with phase as (
    select data->>'chainId' as chain_id, type, recorded_at, (data->>'blockNumber')::int as block_number
    from eventstore.events where position > $1 and type in ('DepositDetected', 'DepositConfirmed')
  ), chains as (
    select chain_id,
      count(*) filter (where type = 'DepositDetected')::int as deposits,
      max(block_number) as last_block,
      max(recorded_at) filter (where type = 'DepositDetected') as detected_at,
      max(recorded_at) filter (where type = 'DepositConfirmed') as confirmed_at
    from phase group by chain_id
  )
  select chains.chain_id as "chainId", chains.deposits,
    (extract(epoch from block.timestamp - $2::timestamptz) * 1000)::float8 as "lastBlockMs",
    (extract(epoch from chains.detected_at - $2::timestamptz) * 1000)::float8 as "detectedMs",
    (extract(epoch from chains.confirmed_at - $2::timestamptz) * 1000)::float8 as "confirmedMs"
  from chains left join devnet_blocks as block on block.chain_id = chains.chain_id and block.number = chains.last_block
  order by chains.confirmed_at desc nulls first`;

export interface DepositStageSampler {
  /** the clock's start (the first injection), performance.now() */
  start(): void;
  /** samples (once a second) until every stage is reached, or past `deadline()` (performance.now()) */
  untilReached(options: { expected: number; deadline: () => number; signal: AbortSignal }): Promise<DepositStageTimes>;
  /** each chain's deposits since the clock's start, the chain whose last confirmation came last first */
  byChain(): Promise<ChainStage[]>;
  /** the credit delays after depth of the deposits credited since the clock's start (chain → its confirmations) */
  creditDelays(confirmations: ReadonlyMap<string, number>): Promise<CreditDelays | null>;
}

/** Takes the store's head and the organization's last delivery now: what the sampler counts from. */
export const depositStageSampler = async (read: ReadRows, orgId: string): Promise<DepositStageSampler> => {
  const rows = await read<{ position: string; seq: string }>(
    `select (select coalesce(max(position), 0) from eventstore.events)::text as position,
            (select coalesce(max(seq), 0) from webhook_deliveries where org_id = $1)::text as seq`,
    [orgId],
  );
  const { position, seq } = rows[0]!;
  let startedAt = performance.now();
  let startedAtWall = new Date();
  const sample = async (): Promise<StageCounts> => (await read<StageCounts>(countsQuery, [position, orgId, seq]))[0]!;
  return {
    start: () => {
      startedAt = performance.now();
      startedAtWall = new Date();
    },
    byChain: async () =>
      (await read<Omit<ChainStage, 'confirmations'>>(chainStagesQuery, [position, startedAtWall])).map((row) => ({
        ...row,
        confirmations: findChain(row.chainId)?.properties.confirmations ?? 0,
      })),
    creditDelays: (confirmations) => creditDelays(read, BigInt(position), startedAtWall, confirmations),
    untilReached: async ({ expected, deadline, signal }) => {
      const times: Omit<DepositStageTimes, 'counts'> = { detectedMs: null, confirmedMs: null, listedMs: null, webhooksDeliveredMs: null, sweepsSettledMs: null };
      let counts = await sample();
      for (;;) {
        signal.throwIfAborted();
        const now = performance.now();
        const at = now - startedAt;
        if (times.detectedMs === null && counts.detected >= expected) times.detectedMs = at;
        if (times.confirmedMs === null && counts.confirmed >= expected) times.confirmedMs = at;
        if (times.listedMs === null && counts.listed >= expected) times.listedMs = at;
        const allConfirmed = times.confirmedMs !== null;
        if (times.webhooksDeliveredMs === null && allConfirmed && counts.webhooksMade > 0 && counts.webhooksDelivered >= counts.webhooksMade) times.webhooksDeliveredMs = at;
        if (times.sweepsSettledMs === null && allConfirmed && counts.sweepsScheduled > 0 && counts.sweepsSettled >= counts.sweepsScheduled) times.sweepsSettledMs = at;
        if (Object.values(times).every((time) => time !== null) || now > deadline()) return { ...times, counts };
        await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
        counts = await sample();
      }
    },
  };
};
