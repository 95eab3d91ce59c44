/**
 * What a rebuild of every projection costs, in measures the machine's load does not swamp: on a
 * DATA_DIR filled by `npm run bench:fill` (its projections caught up first, by one rebuild when
 * they are behind), rebuilds every projection BENCH_REBUILDS (2) times as
 * `ledgergate projections rebuild` does (BENCH_REBUILD_SESSIONS sessions: by default the CLI's, one
 * per projection as far as DATABASE_POOL_SIZE allows) and prints for each: events/s (the store's
 * events over the rebuild's wall time) and, per 100,000 events, the rebuilding process's CPU and
 * the PostgreSQL server's (every server process, read from /proc), the statements it ran and the
 * process's peak RSS so far (the catch-up rebuild's included); then the statements of the last
 * rebuild that took most time, with the temporary file blocks each wrote and read (a sort or hash
 * larger than work_mem) (its embedded server is started here with pg_stat_statements).
 * BENCH_CPU_PROFILE=/some/prefix writes each rebuild's CPU profile (the rebuild alone, not the
 * start-up) as prefix.N.cpuprofile, for `npm run bench:profile`.
 *
 *   DATA_DIR=/tmp/history BENCH_HISTORY_EVENTS=200000 npm run bench:fill
 *   DATA_DIR=/tmp/history npm run bench:rebuild-cost
 */
import fs from 'node:fs/promises';
import inspector from 'node:inspector';
import { loadConfig } from '../src/config/env.js';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.js';
import { openInfrastructure } from '../src/infrastructure.js';
import { createLogger } from '../src/log.js';
import { readCheckpoint, rebuildProjections } from '../src/projections/checkpoint.js';
import { allProjections } from '../src/projections/registry.js';
import { runBenchmark } from './lib/lifecycle.js';
import { parentOf, serverCpuMs } from './lib/process-cpu.js';
import { machineLine } from './lib/report.js';
import { positive } from './lib/settings.js';
import { formatTable, num } from './lib/table.js';

const progress = (message: string) => console.error(`· ${new Date().toISOString().slice(11, 19)} ${message}`);

/** starts the inspector's CPU profiler in this process; the answer stops it and gives the profile */
const startProfile = async (): Promise<() => Promise<object>> => {
  const session = new inspector.Session();
  session.connect();
  const post = (method: string, params: object = {}) =>
    new Promise<{ profile?: object }>((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result as { profile?: object }))));
  await post('Profiler.enable');
  await post('Profiler.start');
  return async () => {
    const { profile } = await post('Profiler.stop');
    session.disconnect();
    return profile!;
  };
};

const processCpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

await runBenchmark(async () => {
  const config = loadConfig(process.env);
  const rebuilds = Math.round(positive('BENCH_REBUILDS', 2));
  const logger = createLogger('warn', { component: 'bench-rebuild' }, (line) => process.stderr.write(line + '\n'));
  // the server started here with pg_stat_statements loaded (the rebuild adopts it), so the statements that cost most can be listed
  const server = await startEmbeddedPostgres({ dataDir: config.dataDir, logger, settings: { shared_preload_libraries: 'pg_stat_statements' } });
  const infrastructure = await openInfrastructure(config, logger, 'cli');
  try {
    await infrastructure.pool.query('create extension if not exists pg_stat_statements');
    const backend = (await infrastructure.pool.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    const postmaster = await parentOf(backend);
    const projections = allProjections();
    const head = await infrastructure.store.headPosition();
    const rows = await infrastructure.pool.query<{ events: string }>('select count(*)::text as events from eventstore.events');
    const events = Number(rows.rows[0]!.events);
    const sessions = Math.round(positive('BENCH_REBUILD_SESSIONS', Math.max(1, config.DATABASE_POOL_SIZE - 1)));
    const behind = (await Promise.all(projections.map((projection) => readCheckpoint(infrastructure.db, projection.name)))).some((position) => position === 0n);
    if (behind) {
      progress(`catching the projections up to ${head} first (one rebuild)`);
      await rebuildProjections(infrastructure.db, infrastructure.store, projections, { sessions });
    }
    const table: string[][] = [];
    let statements: string[][] = [];
    for (let run = 1; run <= rebuilds; run++) {
      progress(`rebuild ${run} of ${rebuilds}: ${num(events)} events, ${sessions} sessions`);
      await infrastructure.pool.query('select pg_stat_statements_reset()');
      const [nodeBefore, serverBefore] = [processCpuMs(), await serverCpuMs(postmaster)];
      const started = performance.now();
      const profiling = process.env.BENCH_CPU_PROFILE ? await startProfile() : null;
      await rebuildProjections(infrastructure.db, infrastructure.store, projections, { sessions });
      if (profiling) await fs.writeFile(`${process.env.BENCH_CPU_PROFILE}.${run}.cpuprofile`, JSON.stringify(await profiling()));
      const seconds = (performance.now() - started) / 1000;
      const [nodeMs, serverMs] = [processCpuMs() - nodeBefore, (await serverCpuMs(postmaster)) - serverBefore];
      const per100k = (ms: number) => num((ms / 1000) * (100_000 / events), 2);
      statements = (
        await infrastructure.pool.query<{ query: string; calls: string; ms: number; temp: string; local: string }>(
          `select query, calls::text, total_exec_time as ms, (temp_blks_written + temp_blks_read)::text as temp, (local_blks_written + local_blks_read)::text as local
             from pg_stat_statements where query not like '%pg_stat_%' order by total_exec_time desc limit 15`,
        )
      ).rows.map((row) => [num(row.ms / 1000, 2), row.calls, num(Number(row.temp)), num(Number(row.local)), row.query.replace(/\s+/g, ' ').slice(0, 150)]);
      const calls = (await infrastructure.pool.query<{ calls: string }>(`select coalesce(sum(calls), 0)::text as calls from pg_stat_statements where query not like '%pg_stat_%'`)).rows[0]!.calls;
      const peakRssMiB = process.resourceUsage().maxRSS / 1024;
      table.push([String(run), num(events), num(seconds, 2), num(events / seconds), per100k(nodeMs), per100k(serverMs), per100k(nodeMs + serverMs), num(Number(calls)), num(peakRssMiB)]);
    }
    console.log(`\nrebuild of every projection — ${machineLine()}\n`);
    console.log(
      formatTable(
        [
          { header: 'run' },
          { header: 'events', align: 'right' },
          { header: 'seconds', align: 'right' },
          { header: 'events/s', align: 'right' },
          { header: 'node CPU s/100k', align: 'right' },
          { header: 'PostgreSQL CPU s/100k', align: 'right' },
          { header: 'total CPU s/100k', align: 'right' },
          { header: 'statements', align: 'right' },
          { header: 'peak RSS MiB', align: 'right' },
        ],
        table,
      ),
    );
    console.log(`\nthe last rebuild's statements that took most time\n`);
    console.log(formatTable([{ header: 'seconds', align: 'right' }, { header: 'calls', align: 'right' }, { header: 'temp blocks', align: 'right' }, { header: 'local blocks', align: 'right' }, { header: 'statement' }], statements));
  } finally {
    await infrastructure.close();
    await server.stop();
  }
});
