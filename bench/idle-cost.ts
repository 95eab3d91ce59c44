/**
 * What the service costs with no traffic at all: the bench's service (the devnet mining every
 * chain, a block every BENCH_BLOCK_TIME_MS, 200 by default), an organization bootstrapped and
 * funded on 20 tokens as the bench does (so the sweeper has wallets to look after), left to
 * settle for BENCH_IDLE_SETTLE_SECONDS (20), then followed for BENCH_SECONDS (30). It prints each
 * process's CPU a second and per mined block, PostgreSQL's, its transactions and statements a
 * second and per mined block, the blocks mined a second per chain, and the statements that ran
 * most (pg_stat_statements, on a server the bench started with the library loaded).
 *
 *   npm run bench:idle-cost
 *   BENCH_SECONDS=60 npm run bench:idle-cost
 */
import { sleep } from './lib/api.js';
import { runBenchmark } from './lib/lifecycle.js';
import { bootstrapWithOwnReceiver, fundOrganization, listTokens } from './lib/organization.js';
import { serverCpuMs, serviceCpuMs } from './lib/process-cpu.js';
import { machineLine } from './lib/report.js';
import { benchBlockTimeMs, describePeakRss } from './lib/service.js';
import { forgottenStatements, startMeasuredService, statementsSinceReset, statementTable, transactionCount } from './lib/server-cost.js';
import { positive } from './lib/settings.js';
import { num } from './lib/table.js';

const progress = (message: string) => console.error(`· ${new Date().toISOString().slice(11, 19)} ${message}`);

await runBenchmark(async (lifecycle) => {
  const settleSeconds = positive('BENCH_IDLE_SETTLE_SECONDS', 20);
  const followSeconds = positive('BENCH_SECONDS', 30);
  progress(machineLine());
  const { service, client, postmaster } = await startMeasuredService(lifecycle, progress);
  const org = await bootstrapWithOwnReceiver(lifecycle, service);
  const tokens = (await listTokens(org.api)).slice(0, 20);
  progress(`funding the organization on ${tokens.length} tokens`);
  await fundOrganization(lifecycle, org.api, tokens, progress);
  progress(`settling for ${settleSeconds} s`);
  await sleep(settleSeconds * 1000, lifecycle.signal);

  const read = async () => {
    const { rows } = await client.query<{ chains: number; heads: string }>('select count(*)::int as chains, coalesce(sum(head_number), 0)::text as heads from devnet_chains');
    return {
      atMs: performance.now(),
      processes: await serviceCpuMs(service),
      serverMs: await serverCpuMs(postmaster),
      transactions: await transactionCount(client),
      chains: rows[0]!.chains,
      heads: Number(rows[0]!.heads),
    };
  };
  await client.query('select pg_stat_statements_reset()');
  const before = await read();
  progress(`following the idle service for ${followSeconds} s`);
  await sleep(followSeconds * 1000, lifecycle.signal);
  const after = await read();
  const statements = await statementsSinceReset(client);
  const forgotten = await forgottenStatements(client);

  const seconds = (after.atMs - before.atMs) / 1000;
  const blocks = after.heads - before.heads;
  const calls = statements.reduce((sum, row) => sum + Number(row.call_count), 0);
  const rate = (value: number) => `${num(value / seconds)} a second, ${(value / blocks).toFixed(2)} a block`;
  const cpu = (value: number) => `${(value / seconds).toFixed(1)} ms a second, ${(value / blocks).toFixed(3)} ms a block`;
  const blockTimeMs = benchBlockTimeMs();

  console.log(`\nthe idle service over ${seconds.toFixed(1)} s — ${machineLine().replace(/^machine: /, '')}\n`);
  console.log(
    `blocks: ${num(blocks)} mined on ${after.chains} chains, ${(blocks / after.chains / seconds).toFixed(2)} a second per chain ` +
      `(a block every ${blockTimeMs} ms is ${(1000 / blockTimeMs).toFixed(2)}), ${(blocks / seconds).toFixed(1)} a second in all`,
  );
  for (const [role, ms] of after.processes) console.log(`CPU of the ${role} process: ${cpu(ms - (before.processes.get(role) ?? 0))}`);
  console.log(`CPU of PostgreSQL: ${cpu(after.serverMs - before.serverMs)}`);
  console.log(`transactions: ${rate(Number(after.transactions - before.transactions))}`);
  console.log(`statements: ${rate(calls)}`);
  console.log(await describePeakRss(service));
  if (forgotten > 0) console.log(`pg_stat_statements forgot ${num(forgotten)} statements to make room: the counts below miss theirs`);
  console.log(['', 'the statements, per mined block:', ...statementTable(statements, (value) => value / blocks, 'block', 30)].join('\n'));
});
