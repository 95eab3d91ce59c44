import { mapConcurrently, pollUntil, type ApiClient } from '../api.js';
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
  /** called before the addresses are made, and before the clock starts (a cost bench takes its readings there) */
  hooks?: { beforeAddresses?: () => Promise<void>; beforeInjection?: () => Promise<void> };
}): Promise<DepositPhaseFigures> => {
  const { api, tokens, count, progress } = options;
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
  progress(`deposits: injecting ${count} transfers through /devnet/deposits in ${batches.length} batches (${INJECTION_CONCURRENCY} in flight)`);
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
  return { deposits: count, users, addresses: pairs.length, injectionMs, injectionPerSecond: perSecond(count, injectionMs), endToEndPerSecond: perSecond(count, endToEndMs), endToEndMs };
};
