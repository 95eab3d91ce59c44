/**
 * What one POST /withdrawals costs, in measures the machine's load does not swamp: statements
 * (each a round trip) and CPU per created withdrawal, of the service and of its PostgreSQL. Boots
 * `ledgergate serve` on a fresh DATA_DIR whose embedded PostgreSQL the bench started with
 * `pg_stat_statements` loaded (the service adopts it), bootstraps an organization, funds BENCH_COMMAND_TOKENS tokens (1), warms up, then runs the load
 * of `npm run bench` for BENCH_SECONDS (15) from BENCH_CONNECTIONS (64) and prints, per created
 * withdrawal: statements, transactions, service CPU, PostgreSQL CPU (every server process, read
 * from /proc), the statements that took PostgreSQL the most time, and where a request waits (its
 * ledger batch's stages, from the API process's /metrics), each process's garbage collections per
 * 1,000 withdrawals (from its /metrics) and its peak RSS. Everything that ran meanwhile is counted
 * (projections, webhooks, processors), as it is part of what a request costs.
 *
 * The service runs as BENCH_SERVICE_PROCESSES says (`split`, the default: an api and a workers
 * process, their CPU shown apart; `one`: one process; or a SERVE_ROLE per process, separated by
 * spaces), as in `npm run bench`.
 *
 * With BENCH_DATA_DIR (a DATA_DIR filled by `npm run bench:fill`, or an empty directory; kept),
 * the service runs on that store as the cost curve runs it: a first start (an organization
 * bootstrapped and funded, every chain worker through its first pass), then a restart, measured.
 * BENCH_EXPLAIN=<file> copies the analyzed plans of the slower statements there (bench/lib/server-cost.ts). BENCH_IDLE_SECONDS (0) first measures the same figures with no load, per second: what the
 * background does on that store. Per statement it prints shared blocks hit and read (from disk or
 * the OS cache) per call and its planning time as well, and per withdrawal the write-ahead log
 * written (records, full-page images, bytes), with the statements that wrote the most of it. BENCH_COMMAND_WEBHOOKS=off bootstraps the
 * organization without a webhook URL (its deliveries wait, unattempted): what the deliveries cost
 * a withdrawal is the difference.
 *
 *   npm run bench:command-cost
 *   BENCH_SECONDS=30 BENCH_COMMAND_TOKENS=20 npm run bench:command-cost
 *   BENCH_DATA_DIR=/tmp/history BENCH_CONNECTIONS=1 BENCH_IDLE_SECONDS=10 npm run bench:command-cost
 */
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.js';
import { silentLogger } from '../src/log.js';
import { runBenchmark } from './lib/lifecycle.js';
import { runLoad, summarizeLoad } from './lib/load.js';
import { sleep, type ApiClient } from './lib/api.js';
import { bootstrapOrganization, bootstrapWithOwnReceiver, fundOrganization, listTokens, type TokenInfo } from './lib/organization.js';
import { withdrawalTemplates } from './lib/phases/withdrawals.js';
import { parentOf, serverCpuMs, serviceCpuMs } from './lib/process-cpu.js';
import { machineLine } from './lib/report.js';
import { describeCollections, describeLedgerWork, describeRequestStages, scrapeMetrics } from './lib/request-stages.js';
import { describeStart, firstStartOnFilledStore, untilStarted } from './lib/restarted-service.js';
import { explainedSettings, shortened } from './lib/server-cost.js';
import { benchDataDir, describeLayout, describePeakRss, startBenchService, type BenchService } from './lib/service.js';
import { positive } from './lib/settings.js';
import { num } from './lib/table.js';

const progress = (message: string) => console.error(`· ${new Date().toISOString().slice(11, 19)} ${message}`);

const totalMs = (byRole: Map<string, number>) => [...byRole.values()].reduce((total, ms) => total + ms, 0);

interface StatementRow {
  query: string;
  call_count: string;
  row_count: string;
  total_exec_time: number;
  /** planning, ms over all calls (pg_stat_statements.track_planning is on here) */
  total_plan_time: number;
  shared_blks_hit: string;
  shared_blks_read: string;
  /** write-ahead log the statement wrote: records and bytes (its triggers' included) */
  wal_records: string;
  wal_bytes: string;
}

/** what the service and its PostgreSQL did between `start()` and `end()`: CPU, transactions, statements */
const counters = (client: pg.Client, service: BenchService, postmaster: number) => {
  const transactions = `select (xact_commit + xact_rollback)::text as count from pg_stat_database where datname = current_database()`;
  const xactCount = async () => BigInt((await client.query<{ count: string }>(transactions)).rows[0]!.count);
  /** the write-ahead log written so far: records, full-page images, bytes (pg_stat_wal) */
  const walWritten = async () => {
    const [row] = (await client.query<{ records: string; fpi: string; bytes: string }>('select wal_records::text as records, wal_fpi::text as fpi, wal_bytes::text as bytes from pg_stat_wal')).rows;
    return { records: Number(row!.records), fpi: Number(row!.fpi), bytes: Number(row!.bytes) };
  };
  return {
    start: async () => {
      await client.query('select pg_stat_statements_reset()');
      const [serviceBefore, serverBefore, xactBefore, walBefore] = [await serviceCpuMs(service), await serverCpuMs(postmaster), await xactCount(), await walWritten()];
      return {
        end: async () => {
          const serviceAfter = await serviceCpuMs(service);
          return {
            serviceMs: totalMs(serviceAfter) - totalMs(serviceBefore),
            serviceMsByProcess: service.layout === 'one' ? null : [...serviceAfter].map(([role, ms]) => [role, ms - (serviceBefore.get(role) ?? 0)] as const),
            serverMs: (await serverCpuMs(postmaster)) - serverBefore,
            xact: Number((await xactCount()) - xactBefore),
            wal: await walWritten().then((after) => ({ records: after.records - walBefore.records, fpi: after.fpi - walBefore.fpi, bytes: after.bytes - walBefore.bytes })),
            statements: (
              await client.query<StatementRow>(
                `select query, calls::text as call_count, rows::text as row_count, total_exec_time, total_plan_time, shared_blks_hit::text, shared_blks_read::text, wal_records::text, wal_bytes::text from pg_stat_statements
                  where query not like '%pg_stat_%' and dbid = (select oid from pg_database where datname = current_database())
                  order by pg_stat_statements.total_exec_time + pg_stat_statements.total_plan_time desc`,
              )
            ).rows,
          };
        },
      };
    },
  };
};

/** the figures of one measurement, each divided by `units` (created withdrawals, or seconds of idling) */
const printCost = (unit: string, units: number, cost: Awaited<ReturnType<Awaited<ReturnType<ReturnType<typeof counters>['start']>>['end']>>) => {
  const per = (value: number) => (units > 0 ? value / units : Number.NaN);
  const totalCalls = cost.statements.reduce((sum, row) => sum + Number(row.call_count), 0);
  const byProcess = cost.serviceMsByProcess ? ` (${cost.serviceMsByProcess.map(([role, ms]) => `${role} ${per(ms).toFixed(2)}`).join(', ')})` : '';
  const totalPlanMs = cost.statements.reduce((sum, row) => sum + row.total_plan_time, 0);
  const totalExecMs = cost.statements.reduce((sum, row) => sum + row.total_exec_time, 0);
  console.log(`per ${unit}: ${per(totalCalls).toFixed(2)} statements, ${per(cost.xact).toFixed(2)} transactions, service CPU ${per(cost.serviceMs).toFixed(2)} ms${byProcess}, PostgreSQL CPU ${per(cost.serverMs).toFixed(2)} ms`);
  console.log(`write-ahead log per ${unit}: ${per(cost.wal.records).toFixed(1)} records, ${per(cost.wal.fpi).toFixed(2)} full-page images, ${(per(cost.wal.bytes) / 1024).toFixed(2)} KiB`);
  console.log(`PostgreSQL's own timing per ${unit}: executing ${per(totalExecMs).toFixed(3)} ms (waits for locks included), planning ${per(totalPlanMs).toFixed(3)} ms`);
  console.log(`\nthe statements that took PostgreSQL the most time (executing and planning), most first:\n\n| ms per ${unit} | planning ms per ${unit} | calls per ${unit} | rows per call | ms per call | planning ms per call | blocks hit per call | blocks read per call | statement |\n|---:|---:|---:|---:|---:|---:|---:|---:|---|`);
  for (const row of cost.statements.slice(0, 25)) {
    const calls = Number(row.call_count);
    const perCall = (value: string | number) => (Number(value) / calls).toFixed(1);
    console.log(`| ${per(row.total_exec_time).toFixed(3)} | ${per(row.total_plan_time).toFixed(3)} | ${per(calls).toFixed(3)} | ${perCall(row.row_count)} | ${(row.total_exec_time / calls).toFixed(3)} | ${(row.total_plan_time / calls).toFixed(3)} | ${perCall(row.shared_blks_hit)} | ${perCall(row.shared_blks_read)} | ${shortened(row.query)} |`);
  }
  // the log is what every write costs twice (written, then flushed and archived): which statement writes it
  const byWal = [...cost.statements].sort((a, b) => Number(b.wal_bytes) - Number(a.wal_bytes));
  console.log(`\nthe statements that wrote the most write-ahead log, most first:\n\n| WAL records per ${unit} | WAL bytes per ${unit} | calls per ${unit} | rows per call | statement |\n|---:|---:|---:|---:|---|`);
  for (const row of byWal.slice(0, 10)) {
    const calls = Number(row.call_count);
    console.log(`| ${per(Number(row.wal_records)).toFixed(2)} | ${per(Number(row.wal_bytes)).toFixed(0)} | ${per(calls).toFixed(3)} | ${(Number(row.row_count) / calls).toFixed(1)} | ${shortened(row.query)} |`);
  }
  // cheap statements called often (polls, BEGIN/COMMIT, locks) are round trips too, though they take little time
  const byCalls = [...cost.statements].sort((a, b) => Number(b.call_count) - Number(a.call_count));
  console.log(`\nthe statements called most often, most first:\n\n| calls per ${unit} | ms per ${unit} | rows per call | statement |\n|---:|---:|---:|---|`);
  for (const row of byCalls.slice(0, 25)) {
    const calls = Number(row.call_count);
    console.log(`| ${per(calls).toFixed(3)} | ${per(row.total_exec_time).toFixed(3)} | ${(Number(row.row_count) / calls).toFixed(1)} | ${shortened(row.query)} |`);
  }
};

await runBenchmark(async (lifecycle) => {
  const seconds = positive('BENCH_SECONDS', 15);
  const idleSeconds = process.env.BENCH_IDLE_SECONDS ? positive('BENCH_IDLE_SECONDS', 0) : 0;
  const connections = Math.round(positive('BENCH_CONNECTIONS', 64));
  const tokenCount = Math.round(positive('BENCH_COMMAND_TOKENS', 1));
  const existingDataDir = process.env.BENCH_DATA_DIR?.trim() || undefined;
  progress(machineLine());
  const dataDir = existingDataDir ?? (await benchDataDir(lifecycle));
  // the server started here, with the library loaded; the service adopts it
  const server = await startEmbeddedPostgres({ dataDir, logger: silentLogger, settings: explainedSettings(lifecycle, dataDir, { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track_planning': 'on' }) });
  lifecycle.onTeardown('stop the embedded server', () => server.stop());
  // named as a ledgergate session: a service stopping (the restart below) leaves the server running for it
  const client = new pg.Client({ ...server.connection('ledgergate'), application_name: 'ledgergate:bench-command-cost' });
  await client.connect();
  lifecycle.onTeardown('disconnect from the service database', () => client.end());
  await client.query('create extension if not exists pg_stat_statements');
  const backend = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  let service: BenchService;
  let org: { api: ApiClient };
  let tokens: TokenInfo[];
  if (existingDataDir) {
    // as the cost curve measures: the first start reads the history and saves the workers' checkpoints, the restart is measured
    const first = await firstStartOnFilledStore(lifecycle, progress, dataDir, existingDataDir);
    org = first.org;
    tokens = [first.token];
    service = await startBenchService(lifecycle, progress, dataDir);
    progress(`restart ${describeStart(await untilStarted(service, org.api.apiKey, lifecycle.signal))}`);
  } else {
    service = await startBenchService(lifecycle, progress, dataDir);
    await service.untilReady(120_000);
    org = process.env.BENCH_COMMAND_WEBHOOKS?.trim() === 'off' ? await bootstrapOrganization(service, null) : await bootstrapWithOwnReceiver(lifecycle, service);
    tokens = (await listTokens(org.api)).slice(0, tokenCount);
    await fundOrganization(lifecycle, org.api, tokens, progress);
  }
  const measured = counters(client, service, await parentOf(backend));

  const plan = { url: service.url, apiKey: org.api.apiKey, connections, templates: withdrawalTemplates(tokens) };
  progress('warming up for 3 s');
  await runLoad(lifecycle, { ...plan, seconds: 3, referencePrefix: `warm-${Date.now().toString(36)}` });
  const layout = `the service as ${describeLayout(service.layout)}`;
  const header = `${tokens.length} token(s), ${existingDataDir ? `the store of ${existingDataDir}` : 'a fresh store'}, ${layout} — ${machineLine().replace(/^machine: /, '')}`;

  if (idleSeconds > 0) {
    await sleep(2_000, lifecycle.signal); // what the warm-up left to do (settlement, webhooks) done first
    progress(`idle: ${idleSeconds} s without load`);
    const idle = await measured.start();
    await sleep(idleSeconds * 1000, lifecycle.signal);
    console.log(`\nno load, ${idleSeconds} s, ${header}\n`);
    printCost('second', idleSeconds, await idle.end());
  }

  progress(`load: ${connections} connections for ${seconds} s over ${tokens.length} token(s)`);
  const loaded = await measured.start();
  const workers = service.workersUrl === service.url ? null : service.workersUrl;
  const metricsBefore = await scrapeMetrics(service.url);
  const workersBefore = workers ? await scrapeMetrics(workers) : null;
  const report = await runLoad(lifecycle, { ...plan, seconds, referencePrefix: `cost-${Date.now().toString(36)}` });
  const metricsAfter = await scrapeMetrics(service.url);
  const workersAfter = workers ? await scrapeMetrics(workers) : null;
  const cost = await loaded.end();
  const load = summarizeLoad(report);
  console.log(`\nPOST /withdrawals, ${connections} connections, ${seconds} s, ${header}\n`);
  console.log(`created ${num(load.created)} (${num(load.createdPerSecond)}/s), p50 ${report.latencyMs.p50} ms, p99 ${report.latencyMs.p99} ms, ${num(load.errors)} errors`);
  printCost('created withdrawal', load.created, cost);
  for (const line of describeRequestStages(metricsBefore, metricsAfter, load.created)) console.log(line);
  if (workersBefore && workersAfter) console.log(describeLedgerWork('the workers process', workersBefore, workersAfter, load.created));
  const apiName = workers ? 'the api process' : 'the service';
  console.log(describeCollections(apiName, metricsBefore, metricsAfter, load.created, 'created withdrawal'));
  if (workersBefore && workersAfter) console.log(describeCollections('the workers process', workersBefore, workersAfter, load.created, 'created withdrawal'));
  console.log(await describePeakRss(service));
});
