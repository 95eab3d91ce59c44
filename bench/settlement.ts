/**
 * Settlement throughput: how long `count` withdrawals queued at once on one chain (one
 * organization, the devnet) take from the first POST /withdrawals to the last one Completed,
 * beside the chain's confirmation time (confirmations × block time). Boots `ledgergate serve` on a
 * fresh DATA_DIR, bootstraps an organization with one signer, funds it (a deposit to a user's
 * address, native coin to the gas wallet), and completes one withdrawal first (the deposit swept,
 * the settlement wallet ready) before the clock starts. Progress on stderr, one table on stdout.
 *
 *   npm run bench:settlement
 *   BENCH_SETTLEMENT_COUNT=10 BENCH_SETTLEMENT_CHAINS=eip155:1 npm run bench:settlement
 *
 * Variables: BENCH_SETTLEMENT_COUNT (100), BENCH_SETTLEMENT_CHAINS (eip155:1,xrpl:mainnet,
 * tron:0x00000000000000000000000000000000: each chain's native coin), BENCH_BLOCK_TIME_MS (500),
 * BENCH_SETTLEMENT_TIMEOUT_S (1800 per chain).
 */
import { mapConcurrently, pollUntil, type ApiClient } from './lib/api.js';
import { runBenchmark, type Lifecycle } from './lib/lifecycle.js';
import { bootstrapOrganization, chainConfirmations, depositAddress, externalAddress, injectDeposit, listTokens, mineConfirmations, type TokenInfo } from './lib/organization.js';
import { machineLine } from './lib/report.js';
import { startBenchService } from './lib/service.js';
import { msSince } from './lib/stats.js';
import { formatTable } from './lib/table.js';
import { startBenchWebhookReceiver } from './lib/webhook-receiver.js';

const DEFAULT_CHAINS = ['eip155:1', 'xrpl:mainnet', 'tron:0x00000000000000000000000000000000'];
/** how many of the withdrawal's amount the funding deposit carries: the queue and its fees fit */
const FUNDED_WITHDRAWALS = 1000n;

const progress = (message: string) => console.error(`· ${new Date().toISOString().slice(11, 19)} ${message}`);

const positive = (name: string, fallback: number): number => {
  const value = Number(process.env[name] ?? fallback);
  if (!(value > 0)) throw new Error(`${name} must be a positive number, not ${process.env[name]}`);
  return value;
};

interface Withdrawal {
  id: string;
  status: string;
  txnError: string | null;
}

const createWithdrawal = async (api: ApiClient, token: TokenInfo, reference: string): Promise<string> => {
  const body = { chainId: token.chainId, tokenId: token.id, amount: token.properties.minimumWithdrawal, recipient: externalAddress(token.chainId), reference };
  return (await api.expect<{ withdrawal: Withdrawal }>(201, 'POST', '/withdrawals', body)).withdrawal.id;
};

/** The organization's withdrawals by id (newest first, every page). */
const withdrawalsById = async (api: ApiClient): Promise<Map<string, Withdrawal>> => {
  const found = new Map<string, Withdrawal>();
  let cursor: string | null = null;
  do {
    const query = new URLSearchParams({ limit: '1000', ...(cursor ? { cursor } : {}) });
    const page: { withdrawals: Withdrawal[]; nextCursor: string | null } = await api.expect(200, 'GET', `/withdrawals?${query}`);
    for (const withdrawal of page.withdrawals) found.set(withdrawal.id, withdrawal);
    cursor = page.nextCursor;
  } while (cursor);
  return found;
};

/** Waits until every id is Completed; throws naming a Failed or Cancelled one. Answers the ms at which each completed, from `started`. */
const untilCompleted = async (lifecycle: Lifecycle, api: ApiClient, ids: readonly string[], started: bigint, timeoutMs: number): Promise<number[]> => {
  const completedAt = new Map<string, number>();
  await pollUntil(
    `${ids.length} withdrawals to complete`,
    async () => {
      const now = msSince(started);
      const all = await withdrawalsById(api);
      for (const id of ids) {
        const withdrawal = all.get(id);
        if (withdrawal?.status === 'Failed' || withdrawal?.status === 'Cancelled') throw new Error(`withdrawal ${id} ended ${withdrawal.status}: ${withdrawal.txnError}`);
        if (withdrawal?.status === 'Completed' && !completedAt.has(id)) completedAt.set(id, now);
      }
      return completedAt.size === ids.length;
    },
    { timeoutMs, intervalMs: 250, signal: lifecycle.signal },
  );
  return ids.map((id) => completedAt.get(id)!);
};

interface ChainFigures {
  chainId: string;
  count: number;
  confirmationMs: number;
  firstMs: number;
  lastMs: number;
}

const measureChain = async (lifecycle: Lifecycle, api: ApiClient, token: TokenInfo, count: number, blockTimeMs: number, timeoutMs: number): Promise<ChainFigures> => {
  const confirmations = (await chainConfirmations(api)).get(token.chainId) ?? 1;
  const amount = BigInt(token.properties.minimumWithdrawal);
  progress(`${token.chainId}: funding (${FUNDED_WITHDRAWALS} withdrawals' worth, and the gas wallet)`);
  await injectDeposit(api, token, await depositAddress(api, token, 'bench-settlement'), amount * FUNDED_WITHDRAWALS);
  const { gasWallets } = await api.expect<{ gasWallets: { chainId: string; address: string }[] }>(200, 'GET', '/gas-station');
  const gasWallet = gasWallets.find((wallet) => wallet.chainId === token.chainId);
  if (gasWallet) await injectDeposit(api, token, { chainId: token.chainId, properties: { address: gasWallet.address } }, BigInt(token.properties.maximumWithdrawal));
  await mineConfirmations(api, [token.chainId], new Map([[token.chainId, confirmations]]));
  await pollUntil(
    `the ${token.chainId} deposit to be credited`,
    async () => {
      const { balances } = await api.expect<{ balances: { tokenId: string; available: string }[] }>(200, 'GET', '/portfolio');
      return BigInt(balances.find((balance) => balance.tokenId === token.id)?.available ?? '0') >= amount * BigInt(count + 1);
    },
    { timeoutMs, intervalMs: 250, signal: lifecycle.signal },
  );
  progress(`${token.chainId}: one withdrawal first (the deposit swept, the settlement wallet ready)`);
  const warmUp = await createWithdrawal(api, token, `bench-settlement-warm-up-${token.chainId}`);
  await untilCompleted(lifecycle, api, [warmUp], process.hrtime.bigint(), timeoutMs);

  progress(`${token.chainId}: ${count} withdrawals queued at once; ${confirmations} confirmations × ${blockTimeMs} ms blocks`);
  const started = process.hrtime.bigint();
  const ids = await mapConcurrently(
    Array.from({ length: count }, (_, index) => index),
    16,
    (index) => createWithdrawal(api, token, `bench-settlement-${token.chainId}-${index}`),
  );
  const times = (await untilCompleted(lifecycle, api, ids, started, timeoutMs)).sort((a, b) => a - b);
  const figures = { chainId: token.chainId, count, confirmationMs: confirmations * blockTimeMs, firstMs: times[0]!, lastMs: times[times.length - 1]! };
  progress(`${token.chainId}: first completed after ${(figures.firstMs / 1000).toFixed(1)} s, all ${count} after ${(figures.lastMs / 1000).toFixed(1)} s`);
  return figures;
};

const main = async (lifecycle: Lifecycle) => {
  const count = Math.round(positive('BENCH_SETTLEMENT_COUNT', 100));
  const blockTimeMs = Math.round(positive('BENCH_BLOCK_TIME_MS', 500));
  process.env.BENCH_BLOCK_TIME_MS = String(blockTimeMs);
  const timeoutMs = positive('BENCH_SETTLEMENT_TIMEOUT_S', 1800) * 1000;
  const chainIds = (process.env.BENCH_SETTLEMENT_CHAINS ?? DEFAULT_CHAINS.join(',')).split(',').map((id) => id.trim()).filter(Boolean);
  progress(machineLine());
  const receiver = await startBenchWebhookReceiver();
  lifecycle.onTeardown('close the webhook receiver', () => receiver.close());
  const service = await startBenchService(lifecycle, progress);
  const org = await bootstrapOrganization(service, receiver.url);
  receiver.setSecret(org.webhookSigningSecret);
  const tokens = await listTokens(org.api);
  const rows: ChainFigures[] = [];
  for (const chainId of chainIds) {
    lifecycle.checkpoint();
    const native = tokens.find((token) => token.chainId === chainId && token.id.includes('/slip44:'));
    if (!native) throw new Error(`no native token of ${chainId} is enabled on the devnet`);
    rows.push(await measureChain(lifecycle, org.api, native, count, blockTimeMs, timeoutMs));
  }
  await service.stop();
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  console.log(
    formatTable(
      [{ header: 'chain' }, { header: 'withdrawals', align: 'right' }, { header: 'confirmation time', align: 'right' }, { header: 'first completed', align: 'right' }, { header: 'all completed', align: 'right' }, { header: 'all ÷ (confirmation + 10 s)', align: 'right' }],
      rows.map((row) => [row.chainId, String(row.count), seconds(row.confirmationMs), seconds(row.firstMs), seconds(row.lastMs), (row.lastMs / (row.confirmationMs + 10_000)).toFixed(2)]),
    ),
  );
};

await runBenchmark(main);
