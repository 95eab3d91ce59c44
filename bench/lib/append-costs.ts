import type pg from 'pg';
import { parentOf, serverCpuMs } from './process-cpu.js';
import { num } from './table.js';

/**
 * What one contender's appends cost, in measures the machine's load does not swamp: transactions
 * (commits), WAL bytes and WAL flushes (fsyncs of every server process) and server CPU per append,
 * and the CPU of this process (the client side of an in-process contender). Taken before the
 * contender connects and after its sessions are gone (a backend's statistics are written when it
 * exits at the latest).
 */
export interface AppendCosts {
  /** events the contender stored meanwhile (one per append), warm-up included */
  appends: number;
  transactions: number;
  walBytes: number;
  walFlushes: number;
  serverCpuMs: number;
  clientCpuMs: number;
}

interface Counters extends AppendCosts {
  /** sessions open beside the bench's own */
  clientBackends: number;
}

const COUNTERS_SQL = `select (select xact_commit + xact_rollback from pg_stat_database where datname = current_database())::text as transactions,
        (select wal_bytes from pg_stat_wal)::text as wal_bytes,
        (select coalesce(sum(fsyncs), 0) from pg_stat_io where object = 'wal')::text as wal_flushes,
        (select count(*) from pg_stat_activity where backend_type = 'client backend' and application_name not like $1)::int as client_backends`;

/** the sessions of the bench's own pool (counted out: it stays open) */
const BENCH_SESSIONS = '%bench-side-by-side';

const read = async (pool: pg.Pool, postmaster: number, eventsTable: string): Promise<Counters> => {
  const serverCpu = await serverCpuMs(postmaster); // before this read's own queries
  const cpu = process.cpuUsage();
  const { rows } = await pool.query<{ transactions: string; wal_bytes: string; wal_flushes: string; client_backends: number }>(COUNTERS_SQL, [BENCH_SESSIONS]);
  const row = rows[0]!;
  const events = (await pool.query<{ count: string }>(`select count(*)::text as count from ${eventsTable}`)).rows[0]!.count;
  return {
    appends: Number(events),
    transactions: Number(row.transactions),
    walBytes: Number(row.wal_bytes),
    walFlushes: Number(row.wal_flushes),
    serverCpuMs: serverCpu,
    clientCpuMs: (cpu.user + cpu.system) / 1000,
    clientBackends: row.client_backends,
  };
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts counting the appends stored in `eventsTable` (one event each) and their costs; the
 * function returned waits until the contender's sessions are gone and gives the difference.
 */
export const countAppendCosts = async (pool: pg.Pool, eventsTable: string): Promise<() => Promise<AppendCosts>> => {
  const backend = (await pool.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  const postmaster = await parentOf(backend);
  const before = await read(pool, postmaster, eventsTable);
  return async () => {
    let after = await read(pool, postmaster, eventsTable);
    for (let waited = 0; after.clientBackends > 0 && waited < 5000; waited += 50) {
      await sleep(50);
      after = await read(pool, postmaster, eventsTable);
    }
    await sleep(250); // gone from pg_stat_activity, then reaped by the postmaster (its CPU moves to the postmaster's children's)
    after = await read(pool, postmaster, eventsTable);
    return {
      appends: after.appends - before.appends,
      transactions: after.transactions - before.transactions,
      walBytes: after.walBytes - before.walBytes,
      walFlushes: after.walFlushes - before.walFlushes,
      serverCpuMs: after.serverCpuMs - before.serverCpuMs,
      clientCpuMs: after.clientCpuMs - before.clientCpuMs,
    };
  };
};

/** One line per contender: its costs divided by its appends. */
export const describeAppendCosts = (name: string, costs: AppendCosts, clientSide: boolean): string => {
  const per = (value: number, decimals: number) => num(value / costs.appends, decimals);
  return (
    `${name}, per append: ${per(costs.transactions, 2)} transactions, ${per(costs.walFlushes, 2)} WAL flushes, ` +
    `${per(costs.walBytes, 0)} WAL bytes, server CPU ${per(costs.serverCpuMs, 3)} ms` +
    (clientSide ? `, client CPU ${per(costs.clientCpuMs, 3)} ms` : '')
  );
};
