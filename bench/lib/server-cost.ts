import fs from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../../src/db/embedded-postgres.js';
import { silentLogger } from '../../src/log.js';
import type { Lifecycle } from './lifecycle.js';
import { parentOf } from './process-cpu.js';
import { benchDataDir, startBenchService, type BenchService } from './service.js';

/**
 * What work costs in measures a loaded machine does not swamp, beside the CPU times of
 * process-cpu.ts: transactions and statements (pg_stat_database and pg_stat_statements, on a
 * server started with the library loaded).
 */

/** a statement on one line, its select list left out (the tables and conditions tell statements apart) */
export const shortened = (query: string) => query.replace(/\s+/g, ' ').replace(/^select (.{40,}?) from /, 'select … from ').replaceAll('|', '\\|').slice(0, 160);

export interface StatementRow {
  query: string;
  call_count: string;
  row_count: string;
  total_exec_time: number;
  /** shared buffers the statement read or found in memory, its triggers' included: work a loaded machine does not change */
  shared_blocks: string;
  /** planning, ms over all calls; null where the server does not track it (pg_stat_statements.track_planning off) */
  total_plan_time: number | null;
}

/** the statements of the current database since the last reset, most called first */
export const statementsSinceReset = async (client: pg.Client): Promise<StatementRow[]> =>
  (
    await client.query<StatementRow>(
      `select query, calls::text as call_count, rows::text as row_count, total_exec_time,
              (shared_blks_hit + shared_blks_read)::text as shared_blocks,
              case when current_setting('pg_stat_statements.track_planning')::boolean then total_plan_time end as total_plan_time
         from pg_stat_statements
        where query not like '%pg_stat_%' and dbid = (select oid from pg_database where datname = current_database())
        order by pg_stat_statements.calls desc`,
    )
  ).rows;

/** statements pg_stat_statements forgot to make room for others since its last reset (their counts are then missing) */
export const forgottenStatements = async (client: pg.Client): Promise<number> => Number((await client.query<{ dealloc: string }>('select dealloc::text from pg_stat_statements_info')).rows[0]!.dealloc);

/** committed and rolled-back transactions of the current database so far */
export const transactionCount = async (client: pg.Client): Promise<bigint> =>
  BigInt((await client.query<{ count: string }>(`select (xact_commit + xact_rollback)::text as count from pg_stat_database where datname = current_database()`)).rows[0]!.count);

/** a markdown table of the statements, each per unit of work (`per` divides a count by the units) */
export const statementTable = (statements: readonly StatementRow[], per: (value: number) => number, unit: string, limit = 25): string[] => [
  `| calls per ${unit} | rows per call | ms per call | planning ms per call | buffers per row | statement |`,
  '|---:|---:|---:|---:|---:|---|',
  ...statements.slice(0, limit).map((row) => {
    const calls = Number(row.call_count);
    const buffersPerRow = Number(row.shared_blocks) / Math.max(Number(row.row_count), calls);
    const planning = row.total_plan_time === null ? 'not tracked' : (row.total_plan_time / calls).toFixed(3);
    return `| ${per(calls).toFixed(3)} | ${(Number(row.row_count) / calls).toFixed(1)} | ${(row.total_exec_time / calls).toFixed(3)} | ${planning} | ${buffersPerRow.toFixed(1)} | ${shortened(row.query)} |`;
  }),
];

/**
 * A measured server's settings, and with BENCH_EXPLAIN=<file> the plans of statements slower than
 * BENCH_EXPLAIN_MS (5), those inside functions too (auto_explain, analyzed, with buffers), copied
 * there at teardown. Call it before the server starts, so the copy runs after it stopped.
 */
export const explainedSettings = (lifecycle: Lifecycle, dataDir: string, settings: Record<string, string>): Record<string, string> => {
  const explainTo = process.env.BENCH_EXPLAIN;
  if (!explainTo) return settings;
  lifecycle.onTeardown('copy the plans', () => fs.copyFile(path.join(dataDir, 'postgres.log'), explainTo));
  return {
    ...settings,
    shared_preload_libraries: 'pg_stat_statements,auto_explain',
    'auto_explain.log_min_duration': process.env.BENCH_EXPLAIN_MS ?? '5',
    'auto_explain.log_analyze': 'on',
    'auto_explain.log_buffers': 'on',
    'auto_explain.log_nested_statements': 'on',
  };
};

export interface MeasuredService {
  service: BenchService;
  /** a session of the bench's own on the service's database (pg_stat_statements created) */
  client: pg.Client;
  /** another such session, closed at teardown */
  connect(): Promise<pg.Client>;
  /** the PostgreSQL server's postmaster, whose processes serverCpuMs sums */
  postmaster: number;
}

/**
 * `ledgergate serve` on a fresh DATA_DIR whose embedded PostgreSQL the bench started first with
 * `pg_stat_statements` loaded (the service adopts it), ready; the server stopped at teardown.
 */
export const startMeasuredService = async (lifecycle: Lifecycle, progress: (message: string) => void): Promise<MeasuredService> => {
  const dataDir = await benchDataDir(lifecycle);
  const server = await startEmbeddedPostgres({ dataDir, logger: silentLogger, settings: explainedSettings(lifecycle, dataDir, { shared_preload_libraries: 'pg_stat_statements' }) });
  lifecycle.onTeardown('stop the embedded server', () => server.stop());
  const service = await startBenchService(lifecycle, progress, dataDir);
  await service.untilReady(120_000);
  const connect = async () => {
    const client = new pg.Client({ ...server.connection('ledgergate'), application_name: 'ledgergate-bench' });
    await client.connect();
    lifecycle.onTeardown('disconnect from the service database', () => client.end());
    return client;
  };
  const client = await connect();
  await client.query('create extension if not exists pg_stat_statements');
  const postmaster = await parentOf((await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid);
  return { service, client, connect, postmaster };
};
