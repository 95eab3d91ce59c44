/**
 * Settlement throughput: how long `count` withdrawals queued at once on one chain (one
 * organization, the devnet) take from the first POST /withdrawals to the last one Completed,
 * beside the chain's confirmation time (confirmations × block time). Boots `ledgergate serve` on a
 * fresh DATA_DIR, bootstraps an organization with one signer, funds it (a deposit to a user's
 * address, native coin to the gas wallet), and completes one withdrawal first (the deposit swept,
 * the settlement wallet ready) before the clock starts (bench/lib/phases/settlement.ts, which
 * `npm run bench` runs on Ethereum and Bitcoin). Progress on stderr, one table on stdout, then per
 * chain what settling cost, in measures a loaded machine does not swamp: CPU per settled withdrawal
 * of each service process and of PostgreSQL (every server process, from /proc), transactions and
 * statements per settled withdrawal (pg_stat_statements, on a server the bench starts with it
 * loaded; the service adopts it), the withdrawals settled in each 10 s since the first request, and
 * each service process's peak RSS.
 *
 *   npm run bench:settlement
 *   BENCH_SETTLEMENT_COUNT=10 BENCH_SETTLEMENT_CHAINS=eip155:1 npm run bench:settlement
 *
 * Variables: BENCH_SETTLEMENT_COUNT (100), BENCH_SETTLEMENT_CHAINS (eip155:1,xrpl:mainnet,
 * tron:0x00000000000000000000000000000000: each chain's native coin), BENCH_BLOCK_TIME_MS (500),
 * BENCH_SETTLEMENT_TIMEOUT_S (1800 per chain).
 */
import { runBenchmark, type Lifecycle } from './lib/lifecycle.js';
import { bootstrapWithOwnReceiver, fundOrganization, listTokens } from './lib/organization.js';
import { measureChainSettlement, nativeTokenOf, type ChainSettlement } from './lib/phases/settlement.js';
import { serverCpuMs, serviceCpuMs } from './lib/process-cpu.js';
import { machineLine } from './lib/report.js';
import { forgottenStatements, startMeasuredService, statementsSinceReset, statementTable, transactionCount, type MeasuredService } from './lib/server-cost.js';
import { describePeakRss } from './lib/service.js';
import { positive } from './lib/settings.js';
import { formatTable } from './lib/table.js';

const DEFAULT_CHAINS = ['eip155:1', 'xrpl:mainnet', 'tron:0x00000000000000000000000000000000'];

const progress = (message: string) => console.error(`· ${new Date().toISOString().slice(11, 19)} ${message}`);

const TIMELINE_STEP_MS = 10_000;

/** CPU of each service process and of PostgreSQL, transactions, statements: what settling the measured withdrawals cost */
const settlementCost = async ({ service, client, postmaster }: MeasuredService) => {
  const read = async () => ({ byRole: await serviceCpuMs(service), serverMs: await serverCpuMs(postmaster), transactions: await transactionCount(client) });
  await client.query('select pg_stat_statements_reset()');
  const before = await read();
  return async (settled: ChainSettlement): Promise<string[]> => {
    const after = await read();
    const [statements, forgotten] = [await statementsSinceReset(client), await forgottenStatements(client)];
    const units = settled.withdrawals;
    const per = (value: number) => value / units;
    const roles = [...after.byRole].map(([role, ms]) => `${role} ${per(ms - (before.byRole.get(role) ?? 0)).toFixed(2)}`);
    const calls = statements.reduce((sum, row) => sum + Number(row.call_count), 0);
    const buckets = new Map<number, number>();
    for (const ms of settled.settledAtMs) buckets.set(Math.floor(ms / TIMELINE_STEP_MS), (buckets.get(Math.floor(ms / TIMELINE_STEP_MS)) ?? 0) + 1);
    const lastBucket = Math.floor(settled.ms / TIMELINE_STEP_MS);
    const timeline = Array.from({ length: lastBucket + 1 }, (_, n) => buckets.get(n) ?? 0);
    return [
      `${settled.chainId}, per settled withdrawal: service CPU ${roles.join(', ')} ms, PostgreSQL CPU ${per(after.serverMs - before.serverMs).toFixed(2)} ms, ` +
        `${per(Number(after.transactions - before.transactions)).toFixed(1)} transactions, ${per(calls).toFixed(1)} statements`,
      `settled in each ${TIMELINE_STEP_MS / 1000} s since the first request: ${timeline.join(' ')}`,
      ...(forgotten > 0 ? [`pg_stat_statements forgot ${forgotten} statements to make room: the counts below miss theirs`] : []),
      '',
      ...statementTable(statements, per, 'settled withdrawal', 20),
      '',
    ];
  };
};

const main = async (lifecycle: Lifecycle) => {
  const count = Math.round(positive('BENCH_SETTLEMENT_COUNT', 100));
  const blockTimeMs = Math.round(positive('BENCH_BLOCK_TIME_MS', 500));
  process.env.BENCH_BLOCK_TIME_MS = String(blockTimeMs);
  const timeoutMs = positive('BENCH_SETTLEMENT_TIMEOUT_S', 1800) * 1000;
  const chainIds = (process.env.BENCH_SETTLEMENT_CHAINS ?? DEFAULT_CHAINS.join(',')).split(',').map((id) => id.trim()).filter(Boolean);
  progress(machineLine());
  const measured = await startMeasuredService(lifecycle, progress);
  const { service } = measured;
  const org = await bootstrapWithOwnReceiver(lifecycle, service);
  const tokens = await listTokens(org.api);
  const rows: ChainSettlement[] = [];
  const costs: string[] = [];
  for (const chainId of chainIds) {
    lifecycle.checkpoint();
    const token = nativeTokenOf(tokens, chainId);
    progress(`${chainId}: funding`);
    await fundOrganization(lifecycle, org.api, [token], progress);
    const cost: { of?: (settled: ChainSettlement) => Promise<string[]> } = {};
    const beforeQueueing = async () => void (cost.of = await settlementCost(measured));
    const settled = await measureChainSettlement({ lifecycle, api: org.api, token, count, blockTimeMs, timeoutMs, progress, beforeQueueing });
    rows.push(settled);
    costs.push(...(await cost.of!(settled)));
  }
  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  console.log(
    formatTable(
      [
        { header: 'chain' },
        { header: 'withdrawals', align: 'right' },
        { header: 'transactions', align: 'right' },
        { header: 'confirmation time', align: 'right' },
        { header: 'first completed', align: 'right' },
        { header: 'all completed', align: 'right' },
        { header: 'all ÷ (confirmation + 10 s)', align: 'right' },
      ],
      rows.map((row) => [row.chainId, String(row.withdrawals), String(row.transactions), seconds(row.confirmationMs), seconds(row.firstMs), seconds(row.ms), (row.ms / (row.confirmationMs + 10_000)).toFixed(2)]),
    ),
  );
  console.log(['', ...costs, await describePeakRss(service)].join('\n'));
};

await runBenchmark(main);
