import { mapConcurrently, pollUntil, type ApiClient } from '../api.js';
import type { CreditDelays, ReadRows } from '../deposit-credit-delays.js';
import { depositStageSampler, type ChainStage, type DepositStageTimes } from '../deposit-stages.js';
import type { Lifecycle } from '../lifecycle.js';
import { chainConfirmations, depositAddress, injectDeposits, mineConfirmations, portfolio, type TokenInfo } from '../organization.js';
import { msSince, perSecond } from '../stats.js';

export interface DepositPhaseFigures {
  deposits: number;
  users: number;
  addresses: number;
  injectionMs: number;
  injectionPerSecond: number;
  endToEndPerSecond: number;
  endToEndMs: number;
  /** with the service's database: what the service controls, and what came after the row's end */
  service?: ServiceSide;
}

/** Read from the service's database while and after the deposits travel (the phase's `db`). */
export interface ServiceSide {
  /** each deposit from its chain's depth reached to its credit; null when none was credited */
  credit: CreditDelays | null;
  /** when each stage was reached, followed `followMs` past the row's end (webhooks, sweeps) */
  stages: DepositStageTimes;
  chains: ChainStage[];
  followMs: number;
}

const MAX_USERS = 500;
const SETUP_CONCURRENCY = 16;
/**
 * Transfers are injected in batches (CONTRACT §8's batch form), so the figure measures the service
 * (watch, detect, confirm, credit, project, webhook), not one HTTP request per transfer. A batch
 * locks every chain it touches: two in flight keep one being parsed while the other is mined.
 */
const INJECTION_BATCH = 1000;
const INJECTION_CONCURRENCY = 2;
const PAGE = 1000;

/** Every txnHash /payments lists, newest first, stopping early once all of `wanted` are seen. */
const visibleHashes = async (api: ApiClient, wanted: Set<string>, seen: Set<string>) => {
  let cursor: string | null = null;
  do {
    const query = new URLSearchParams({ limit: String(PAGE), ...(cursor ? { cursor } : {}) });
    const page: { payments: { txnHash: string }[]; nextCursor: string | null } = await api.expect(200, 'GET', `/payments?${query}`);
    for (const payment of page.payments) if (wanted.has(payment.txnHash)) seen.add(payment.txnHash);
    cursor = page.nextCursor;
  } while (cursor && seen.size < wanted.size);
};

/**
 * `count` devnet transfers to many users' deposit addresses (up to 500 users × the tokens),
 * injected as fast as the devnet endpoint allows, the confirmations mined, then polled until
 * every one is listed by /payments and no balance has anything pending (every deposit credited).
 * End to end: count / (first injection → last one visible and credited). The addresses are
 * created before the clock starts.
 */
export const runDepositPhase = async (options: {
  lifecycle: Lifecycle;
  api: ApiClient;
  tokens: TokenInfo[];
  count: number;
  progress: (message: string) => void;
  /** the service's database, read for the credit delays after depth and the stages (ServiceSide) */
  db?: { read: ReadRows; orgId: string; followMs: number };
  /** called before the addresses are made, before the clock starts and when every deposit is listed and credited (a cost bench takes its readings there) */
  hooks?: { beforeAddresses?: () => Promise<void>; beforeInjection?: () => Promise<void>; afterCredited?: () => Promise<void> };
}): Promise<DepositPhaseFigures> => {
  const { api, tokens, count, progress, db } = options;
  const users = Math.min(MAX_USERS, Math.max(1, Math.ceil(count / tokens.length)));
  const chainIds = [...new Set(tokens.map((token) => token.chainId))];
  progress(`deposits: creating deposit addresses for ${users} users on ${chainIds.length} chains`);
  await options.hooks?.beforeAddresses?.();
  const pairs = Array.from({ length: users }, (_, user) => chainIds.map((chainId) => ({ user, chainId }))).flat();
  const addresses = new Map<string, Awaited<ReturnType<typeof depositAddress>>>();
  await mapConcurrently(pairs, SETUP_CONCURRENCY, async ({ user, chainId }) => {
    const token = tokens.find((candidate) => candidate.chainId === chainId)!;
    addresses.set(`${user}|${chainId}`, await depositAddress(api, token, `bench-depositor-${user}`));
  });
  const confirmations = await chainConfirmations(api);

  // deposit i: token i mod T, user (i div T) mod U, so each user gets every token in turn
  const plan = Array.from({ length: count }, (_, index) => {
    const token = tokens[index % tokens.length]!;
    const user = Math.floor(index / tokens.length) % users;
    return { token, account: addresses.get(`${user}|${token.chainId}`)!, amount: BigInt(token.minimumAmount) * 2n };
  });
  const batches = Array.from({ length: Math.ceil(count / INJECTION_BATCH) }, (_, index) => plan.slice(index * INJECTION_BATCH, (index + 1) * INJECTION_BATCH));
  await options.hooks?.beforeInjection?.();
  const sampler = db && (await depositStageSampler(db.read, db.orgId));
  let followUntil = Number.POSITIVE_INFINITY;
  progress(`deposits: injecting ${count} transfers through /devnet/deposits in ${batches.length} batches (${INJECTION_CONCURRENCY} in flight)`);
  sampler?.start();
  const stages = sampler?.untilReached({ expected: count, deadline: () => followUntil, signal: options.lifecycle.signal });
  const started = process.hrtime.bigint();
  const hashes = (await mapConcurrently(batches, INJECTION_CONCURRENCY, (batch) => injectDeposits(api, batch))).flat();
  const injectionMs = msSince(started);
  await mineConfirmations(api, chainIds, confirmations);
  progress(`deposits: injected in ${(injectionMs / 1000).toFixed(1)} s; waiting until all are listed and credited`);

  const wanted = new Set(hashes);
  const seen = new Set<string>();
  await pollUntil(
    `${count} deposits to be listed by /payments and credited`,
    async () => {
      await visibleHashes(api, wanted, seen);
      if (seen.size < wanted.size) return false;
      return (await portfolio(api)).every((balance) => balance.pending === '0');
    },
    { timeoutMs: Math.max(120_000, count * 100), intervalMs: 250, signal: options.lifecycle.signal },
  );
  const endToEndMs = msSince(started);
  progress(`deposits: all ${count} listed and credited ${(endToEndMs / 1000).toFixed(1)} s after the first injection`);
  await options.hooks?.afterCredited?.();
  const figures = { deposits: count, users, addresses: pairs.length, injectionMs, injectionPerSecond: perSecond(count, injectionMs), endToEndPerSecond: perSecond(count, endToEndMs), endToEndMs };
  if (!sampler || !stages || !db) return figures;
  const credit = await sampler.creditDelays(confirmations);
  progress(`deposits: following the webhooks and sweeps (${db.followMs / 1000} s at most)`);
  followUntil = performance.now() + db.followMs;
  return { ...figures, service: { credit, stages: await stages, chains: await sampler.byChain(), followMs: db.followMs } };
};

const s = (ms: number | null) => (ms === null ? 'not reached' : `${(ms / 1000).toFixed(1)} s`);

/**
 * The service's part, said beside the end-to-end figure: each deposit from the moment its chain's
 * required depth was reached (it could be credited from then on) until its credit was appended,
 * and the deposits credited a second from the first depth reached to the last credit.
 */
export const creditDelayLine = (credit: CreditDelays | null): string =>
  credit === null
    ? 'the service’s part: no deposit credited'
    : `the service’s part (each deposit from its chain’s depth reached to its credit appended; the devnet’s block times and depths excluded): ` +
      `credit delay p50 ${s(credit.delay.p50)}, p99 ${s(credit.delay.p99)}, max ${s(credit.delay.max)} over ${credit.delay.count} deposits; ` +
      `${credit.creditedPerSecond.toFixed(0)}/s credited once confirmable (first depth reached ${s(credit.firstDepthMs)}, last ${s(credit.lastDepthMs)}, last credit ${s(credit.lastCreditMs)} after the first injection)`;

/** What came after the row's end: the deposits' webhooks and sweeps, followed for `followMs` at most. */
export const afterwardsLine = ({ stages, followMs }: ServiceSide): string =>
  `afterwards (not in the row; followed ${followMs / 1000} s at most, s after the first injection): ` +
  `webhooks delivered ${s(stages.webhooksDeliveredMs)} (${stages.counts.webhooksDelivered} of ${stages.counts.webhooksMade}), ` +
  `sweeps settled ${s(stages.sweepsSettledMs)} (${stages.counts.sweepsSettled} of ${stages.counts.sweepsScheduled})`;
