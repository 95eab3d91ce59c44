/**
 * What one POST /withdrawals costs, in measures the machine's load does not swamp: statements
 * (each a round trip) and CPU per created withdrawal, of the service and of its PostgreSQL. Boots
 * `ledgergate serve` on a fresh DATA_DIR whose embedded PostgreSQL the bench started with
 * `pg_stat_statements` loaded (the service adopts it), bootstraps an organization, funds BENCH_COMMAND_TOKENS tokens (1), warms up, then runs the load
 * of `npm run bench` for BENCH_SECONDS (15) from BENCH_CONNECTIONS (64) and prints, per created
 * withdrawal: statements, transactions, service CPU, PostgreSQL CPU (every server process, read
 * from /proc), and the statements that ran most. Everything that ran meanwhile is counted
 * (projections, webhooks, processors), as it is part of what a request costs.
 *
 * The service runs as BENCH_SERVICE_PROCESSES says (`split`, the default: an api and a workers
 * process, their CPU shown apart; `one`: one process), as in `npm run bench`.
 *
 *   npm run bench:command-cost
 *   BENCH_SECONDS=30 BENCH_COMMAND_TOKENS=20 npm run bench:command-cost
 */
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.js';
import { silentLogger } from '../src/log.js';
import { runBenchmark } from './lib/lifecycle.js';
import { runLoad, summarizeLoad } from './lib/load.js';
import { bootstrapWithOwnReceiver, fundOrganization, listTokens } from './lib/organization.js';
import { withdrawalTemplates } from './lib/phases/withdrawals.js';
import { parentOf, serverCpuMs, serviceCpuMs } from './lib/process-cpu.js';
import { machineLine } from './lib/report.js';
import { benchDataDir, startBenchService } from './lib/service.js';
import { positive } from './lib/settings.js';
import { num } from './lib/table.js';

const progress = (message: string) => console.error(`· ${new Date().toISOString().slice(11, 19)} ${message}`);

const totalMs = (byRole: Map<string, number>) => [...byRole.values()].reduce((total, ms) => total + ms, 0);

/** a statement on one line, its select list left out (the tables and conditions tell statements apart) */
const shortened = (query: string) => query.replace(/\s+/g, ' ').replace(/^select (.{40,}?) from /, 'select … from ').replaceAll('|', '\\|').slice(0, 160);

interface StatementRow {
  query: string;
  call_count: string;
  row_count: string;
  total_exec_time: number;
}

await runBenchmark(async (lifecycle) => {
  const seconds = positive('BENCH_SECONDS', 15);
  const connections = Math.round(positive('BENCH_CONNECTIONS', 64));
  const tokenCount = Math.round(positive('BENCH_COMMAND_TOKENS', 1));
  progress(machineLine());
  const dataDir = await benchDataDir(lifecycle);
  // the server started here, with the library loaded; the service adopts it
  const server = await startEmbeddedPostgres({ dataDir, logger: silentLogger, settings: { shared_preload_libraries: 'pg_stat_statements' } });
  lifecycle.onTeardown('stop the embedded server', () => server.stop());
  const service = await startBenchService(lifecycle, progress, dataDir);
  await service.untilReady(120_000);
  const client = new pg.Client({ ...server.connection('ledgergate'), application_name: 'ledgergate-bench' });
  await client.connect();
  lifecycle.onTeardown('disconnect from the service database', () => client.end());
  await client.query('create extension if not exists pg_stat_statements');
  const backend = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  const postmaster = await parentOf(backend);

  const org = await bootstrapWithOwnReceiver(lifecycle, service);
  const tokens = (await listTokens(org.api)).slice(0, tokenCount);
  await fundOrganization(lifecycle, org.api, tokens, progress);
  const plan = { url: service.url, apiKey: org.api.apiKey, connections, templates: withdrawalTemplates(tokens) };
  progress('warming up for 3 s');
  await runLoad(lifecycle, { ...plan, seconds: 3, referencePrefix: `warm-${Date.now().toString(36)}` });

  await client.query('select pg_stat_statements_reset()');
  const serviceBefore = await serviceCpuMs(service);
  const serverBefore = await serverCpuMs(postmaster);
  const transactions = `select (xact_commit + xact_rollback)::text as count from pg_stat_database where datname = current_database()`;
  const xactBefore = BigInt((await client.query<{ count: string }>(transactions)).rows[0]!.count);
  progress(`load: ${connections} connections for ${seconds} s over ${tokens.length} token(s)`);
  const report = await runLoad(lifecycle, { ...plan, seconds, referencePrefix: `cost-${Date.now().toString(36)}` });
  const serviceAfter = await serviceCpuMs(service);
  const serviceMs = totalMs(serviceAfter) - totalMs(serviceBefore);
  const serverMs = (await serverCpuMs(postmaster)) - serverBefore;
  const xact = Number(BigInt((await client.query<{ count: string }>(transactions)).rows[0]!.count) - xactBefore);
  const statements = (
    await client.query<StatementRow>(
      `select query, calls::text as call_count, rows::text as row_count, total_exec_time from pg_stat_statements
        where query not like '%pg_stat_%' and dbid = (select oid from pg_database where datname = current_database())
        order by pg_stat_statements.calls desc`,
    )
  ).rows;
  const load = summarizeLoad(report);
  const per = (value: number) => (load.created > 0 ? value / load.created : Number.NaN);
  const totalCalls = statements.reduce((sum, row) => sum + Number(row.call_count), 0);

  const layout = service.layout === 'split' ? 'the service as two processes (api, workers)' : 'the service as one process';
  console.log(`\nPOST /withdrawals, ${tokens.length} token(s), ${connections} connections, ${seconds} s, ${layout} — ${machineLine().replace(/^machine: /, '')}\n`);
  console.log(`created ${num(load.created)} (${num(load.createdPerSecond)}/s), p50 ${report.latencyMs.p50} ms, p99 ${report.latencyMs.p99} ms, ${num(load.errors)} errors`);
  const byProcess = service.layout === 'one' ? '' : ` (${[...serviceAfter].map(([role, ms]) => `${role} ${per(ms - (serviceBefore.get(role) ?? 0)).toFixed(2)}`).join(', ')})`;
  console.log(`per created withdrawal: ${per(totalCalls).toFixed(2)} statements, ${per(xact).toFixed(2)} transactions, service CPU ${per(serviceMs).toFixed(2)} ms${byProcess}, PostgreSQL CPU ${per(serverMs).toFixed(2)} ms`);
  console.log('\n| calls per withdrawal | rows per call | ms per call | statement |\n|---:|---:|---:|---|');
  for (const row of statements.slice(0, 25)) {
    const calls = Number(row.call_count);
    console.log(`| ${per(calls).toFixed(3)} | ${(Number(row.row_count) / calls).toFixed(1)} | ${(row.total_exec_time / calls).toFixed(3)} | ${shortened(row.query)} |`);
  }
});
