/**
 * What one webhook delivery costs: the real dispatcher sends a backlog of BENCH_WEBHOOKS (20,000)
 * due deliveries, spread over BENCH_WEBHOOK_ORGANIZATIONS (20) organizations, to a local
 * keep-alive receiver that checks every signature, on a throwaway embedded PostgreSQL (default
 * durability) with pg_stat_statements. Beside the backlog the outbox holds what a long-lived
 * service's does: BENCH_PARKED (1,000,000) deliveries parked for organizations without a URL and
 * BENCH_DELIVERED (200,000) delivered ones with their attempts. Prints deliveries per second, this
 * process's CPU (dispatcher and receiver) and garbage collections, PostgreSQL's CPU per delivery (load-independent), and
 * the statements per delivery (their planning and buffers too). BENCH_WEBHOOK_CONCURRENCY sets the dispatcher's sends in flight;
 * BENCH_EXPLAIN=<file> keeps the analyzed plans of the slower statements, BENCH_CPU_PROFILE=<file>
 * a CPU profile of the sends. BENCH_WEBHOOK_TRICKLE (0) adds one more organization whose deliveries
 * fall due one by one, evenly over BENCH_WEBHOOK_TRICKLE_SECONDS (10), beside the backlog: the
 * shape of the bench's webhooks phase (one organization's backlog, another's steady stream).
 *
 *   npm run bench:webhook-cost
 *   BENCH_CPU_PROFILE=send.cpuprofile BENCH_WEBHOOK_CONCURRENCY=128 npm run bench:webhook-cost
 *   BENCH_WEBHOOKS=5000 BENCH_PARKED=0 npm run bench:webhook-cost
 *   BENCH_WEBHOOK_ORGANIZATIONS=1 BENCH_WEBHOOK_TRICKLE=2000 npm run bench:webhook-cost
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import inspector from 'node:inspector';
import os from 'node:os';
import path from 'node:path';
import { constants as performanceConstants, PerformanceObserver } from 'node:perf_hooks';
import { sql } from 'kysely';
import pg from 'pg';
import { createDatabase } from '../src/db/database.js';
import { timeOrderedUuid } from '../src/db/time-ordered-uuid.js';
import { startEmbeddedPostgres } from '../src/db/embedded-postgres.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createPool } from '../src/db/pool.js';
import { createLogger } from '../src/log.js';
import { readModelMigrations } from '../src/projections/migrations/index.js';
import { encryptSecret, secretPurpose } from '../src/security/secret-box.js';
import { WebhookDispatcher } from '../src/webhooks/dispatcher.js';
import { WAITING_FOR_URL } from '../src/webhooks/outbox.js';
import { webhookDeliveriesTotal } from '../src/observability/metrics.js';
import { runBenchmark, type Lifecycle } from './lib/lifecycle.js';
import { parentOf, serverCpuMs } from './lib/process-cpu.js';
import { statementsSinceReset, statementTable } from './lib/server-cost.js';
import { num } from './lib/table.js';
import { benchDataDir } from './lib/service.js';
import { startBenchWebhookReceiver } from './lib/webhook-receiver.js';

/**
 * The outbox's row updates so far, and how many of them were heap-only (HOT: the new version on
 * the row's own page, no index entry written). Each session's counts reach these figures when it
 * goes idle, at most once a second: read them two seconds after the sends.
 */
const outboxUpdates = async (client: pg.Client): Promise<{ updates: number; hot: number }> => {
  const { rows } = await client.query<{ updates: string; hot: string }>(
    "select n_tup_upd::text as updates, n_tup_hot_upd::text as hot from pg_stat_user_tables where relid = 'webhook_deliveries'::regclass",
  );
  return { updates: Number(rows[0]!.updates), hot: Number(rows[0]!.hot) };
};

/** attempts this process's dispatchers have recorded so far, whatever their outcome (the metric counts each once its statement committed) */
const attemptsRecorded = async (): Promise<number> => (await webhookDeliveriesTotal.get()).values.reduce((sum, { value }) => sum + value, 0);

/** bytes of WAL written so far: its difference over the sends is what they cost the log (and each replica) */
const walPosition = async (client: pg.Client): Promise<number> => {
  const { rows } = await client.query<{ bytes: string }>("select (pg_current_wal_lsn() - '0/0')::text as bytes");
  return Number(rows[0]!.bytes);
};

const WEBHOOKS = Number(process.env.BENCH_WEBHOOKS ?? 20_000);
const ORGANIZATIONS = Number(process.env.BENCH_WEBHOOK_ORGANIZATIONS ?? 20);
const PARKED = Number(process.env.BENCH_PARKED ?? 1_000_000);
const DELIVERED = Number(process.env.BENCH_DELIVERED ?? 200_000);
/** the bench's webhooks phase in small: one more organization whose deliveries fall due one by one while the backlog is sent */
const TRICKLE = Number(process.env.BENCH_WEBHOOK_TRICKLE ?? 0);
const TRICKLE_SECONDS = Number(process.env.BENCH_WEBHOOK_TRICKLE_SECONDS ?? 10);
const DUE = WEBHOOKS + TRICKLE;

const progress = (message: string) => console.error(`· ${message}`);

/** a body the size of a withdrawal's webhook */
const BODY = JSON.stringify({ type: 'withdrawal.created', timestamp: '2026-11-26T10:00:00.000Z', payload: { id: 'w'.repeat(36), padding: 'x'.repeat(500) } });

const main = async (lifecycle: Lifecycle): Promise<void> => {
  const logger = createLogger('warn', { component: 'bench' }, (line) => process.stderr.write(line + '\n'));
  progress('starting embedded PostgreSQL (pg_stat_statements) in a temporary DATA_DIR');
  const dataDir = await benchDataDir(lifecycle);
  // BENCH_EXPLAIN=<file>: the plans of the dispatcher's slower statements (auto_explain, analyzed, with buffers) copied there
  const explainTo = process.env.BENCH_EXPLAIN;
  // planning tracked too: the dispatcher's statements are planned at every call (in a steady stream, more time than they run)
  const statistics = { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track_planning': 'on' };
  const explain = { ...statistics, shared_preload_libraries: 'pg_stat_statements,auto_explain', 'auto_explain.log_min_duration': '3', 'auto_explain.log_analyze': 'on', 'auto_explain.log_buffers': 'on' };
  const server = await startEmbeddedPostgres({ dataDir, logger, settings: explainTo ? explain : statistics });
  if (explainTo) lifecycle.onTeardown('copy the plans', () => fs.copyFile(path.join(dataDir, 'postgres.log'), explainTo));
  lifecycle.onTeardown('stop PostgreSQL', () => server.stop());
  const config = server.connection('ledgergate');
  const pool = createPool(config, { max: 12, purpose: 'bench' });
  lifecycle.onTeardown('close the pool', () => pool.end());
  await migrateToLatest(pool, readModelMigrations);
  const db = createDatabase(pool);
  const stats = new pg.Client({ ...config, application_name: 'ledgergate-bench' });
  await stats.connect();
  lifecycle.onTeardown('disconnect', () => stats.end());
  await stats.query('create extension if not exists pg_stat_statements');
  const postmaster = await parentOf((await stats.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid);

  const encryptionKey = randomBytes(32);
  // the integrator's end, as docs/api.md shows it (the signature checked, ids deduplicated); one secret for every organization
  const secret = randomBytes(32).toString('hex');
  const receiver = await startBenchWebhookReceiver();
  receiver.setSecret(secret);
  lifecycle.onTeardown('close the receiver', () => receiver.close());
  const now = new Date();
  const orgIds = Array.from({ length: ORGANIZATIONS }, (_, index) => `org_hooks${index}`);
  for (const orgId of [...orgIds, 'org_trickle', 'org_without_url']) {
    await db
      .insertInto('organizations')
      .values({
        id: orgId,
        name: orgId,
        webhook_url: orgId === 'org_without_url' ? null : receiver.url,
        webhook_signing_secret_encrypted: encryptSecret(encryptionKey, secret, secretPurpose.webhookSigningSecret(orgId)),
        min_withdrawal_signers: 1,
        created_at: now,
        updated_at: now,
      })
      .execute();
  }
  progress(`filling the outbox: ${num(PARKED)} parked, ${num(DELIVERED)} delivered, then ${num(WEBHOOKS)} due`);
  await sql`
    insert into webhook_deliveries (id, org_id, event_type, dedupe_key, body, event_timestamp, next_attempt_at)
    select ${timeOrderedUuid}, 'org_without_url', 'withdrawal.created', 'parked:' || n, ${BODY}, now(), ${WAITING_FOR_URL}::timestamptz
    from generate_series(1, ${PARKED}::int) as n
  `.execute(db);
  await sql`
    insert into webhook_deliveries (id, org_id, event_type, dedupe_key, body, event_timestamp, status, attempts, next_attempt_at, delivered_at, last_status_code)
    select ${timeOrderedUuid}, (${orgIds}::text[])[1 + n % ${ORGANIZATIONS}::int], 'withdrawal.created', 'delivered:' || n, ${BODY}, now(), 'delivered', 1, null, now(), 200
    from generate_series(1, ${DELIVERED}::int) as n
  `.execute(db);
  // their attempt log: one finished attempt each
  await sql`
    insert into webhook_attempts (id, delivery_id, attempt, started_at, finished_at, status_code, duration_ms)
    select ${timeOrderedUuid}, id, 1, now(), now(), 200, 1 from webhook_deliveries where status = 'delivered'
  `.execute(db);
  await sql`
    insert into webhook_deliveries (id, org_id, event_type, dedupe_key, body, event_timestamp, next_attempt_at)
    select ${timeOrderedUuid}, (${orgIds}::text[])[1 + n % ${ORGANIZATIONS}::int], 'withdrawal.created', 'due:' || n, ${BODY}, now(), now()
    from generate_series(1, ${WEBHOOKS}::int) as n
  `.execute(db);
  // the steady stream: due one after another, evenly over TRICKLE_SECONDS from the start
  await sql`
    insert into webhook_deliveries (id, org_id, event_type, dedupe_key, body, event_timestamp, next_attempt_at)
    select ${timeOrderedUuid}, 'org_trickle', 'withdrawal.created', 'due:trickle:' || n, ${BODY}, now(),
           now() + (n * ${(TRICKLE_SECONDS * 1000) / Math.max(TRICKLE, 1)}::double precision) * interval '1 millisecond'
    from generate_series(1, ${TRICKLE}::int) as n
  `.execute(db);
  await sql`vacuum analyze webhook_deliveries, webhook_attempts`.execute(db);
  await sql`checkpoint`.execute(db);
  lifecycle.checkpoint();

  await stats.query('select pg_stat_statements_reset()');
  const recordedBefore = await attemptsRecorded();
  const serverBefore = await serverCpuMs(postmaster);
  const walBefore = await walPosition(stats);
  const updatesBefore = await outboxUpdates(stats);
  const cpuBefore = process.cpuUsage();
  // this process's garbage collections over the sends: each allocation per delivery is young-generation work
  const collections = { minor: { count: 0, ms: 0 }, major: { count: 0, ms: 0 } };
  const gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as { detail?: { kind?: number } }).detail?.kind;
      const counted = kind === performanceConstants.NODE_PERFORMANCE_GC_MINOR ? collections.minor : kind === performanceConstants.NODE_PERFORMANCE_GC_MAJOR ? collections.major : null;
      if (!counted) continue;
      counted.count++;
      counted.ms += entry.duration;
    }
  });
  gcObserver.observe({ entryTypes: ['gc'] });
  // BENCH_CPU_PROFILE=<file>: a CPU profile of this process over the sends alone (npm run bench:profile reads it)
  const profileTo = process.env.BENCH_CPU_PROFILE;
  const profiler = new inspector.Session();
  if (profileTo) {
    profiler.connect();
    await new Promise((resolve) => profiler.post('Profiler.enable', () => profiler.post('Profiler.start', resolve)));
  }
  const concurrency = process.env.BENCH_WEBHOOK_CONCURRENCY ? { concurrency: Number(process.env.BENCH_WEBHOOK_CONCURRENCY) } : {};
  const dispatcher = new WebhookDispatcher({ db, listen: config, encryptionKey, retryDelaysMs: [5_000, 25_000], logger, ...concurrency });
  const started = performance.now();
  dispatcher.start();
  while (receiver.firstArrivals.length < DUE) await new Promise((resolve) => setTimeout(resolve, 5));
  const elapsedMs = performance.now() - started;
  if (profileTo) {
    const profile = await new Promise<unknown>((resolve, reject) => profiler.post('Profiler.stop', (error, result) => (error ? reject(error) : resolve(result.profile))));
    await fs.writeFile(profileTo, JSON.stringify(profile));
    profiler.disconnect();
  }
  // every outcome recorded, read while the dispatcher's sessions are still open: a session that ends
  // (the claims' own, in stop()) may not be counted yet when the figure is read after stop()
  while ((await attemptsRecorded()) < recordedBefore + DUE) await new Promise((resolve) => setTimeout(resolve, 5));
  const cpu = process.cpuUsage(cpuBefore);
  gcObserver.disconnect();
  const serverMs = (await serverCpuMs(postmaster)) - serverBefore;
  const walBytes = (await walPosition(stats)) - walBefore;
  await dispatcher.stop();
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const updatesAfter = await outboxUpdates(stats);
  const updates = updatesAfter.updates - updatesBefore.updates;
  const hotUpdates = updatesAfter.hot - updatesBefore.hot;
  const statements = (await statementsSinceReset(stats)).filter((row) => /webhook/.test(row.query));
  const delivered = Number((await sql<{ count: string }>`select count(*) as count from webhook_deliveries where status = 'delivered' and dedupe_key like 'due:%'`.execute(db)).rows[0]!.count);
  const execMs = statements.reduce((sum, row) => sum + row.total_exec_time, 0);

  const trickle = TRICKLE > 0 ? `, and ${num(TRICKLE)} of one more organization falling due over ${TRICKLE_SECONDS} s` : '';
  console.log(`\nwebhook deliveries — ${num(WEBHOOKS)} due over ${ORGANIZATIONS} organizations${trickle}; outbox also holds ${num(PARKED)} parked and ${num(DELIVERED)} delivered; ${os.cpus().length} cores\n`);
  console.log(`| figure | value |\n|---|---:|`);
  console.log(`| deliveries per second | ${num(Math.round((DUE * 1000) / elapsedMs))} (${(elapsedMs / 1000).toFixed(2)} s) |`);
  console.log(`| recorded delivered | ${num(delivered)} (bad signatures at the receiver: ${receiver.badSignatures()}) |`);
  console.log(`| dispatcher process CPU per delivery | ${((cpu.user + cpu.system) / 1000 / DUE).toFixed(3)} ms |`);
  const perThousand = (gc: { count: number; ms: number }) => `${((gc.count * 1000) / DUE).toFixed(2)}, ${((gc.ms * 1000) / DUE).toFixed(1)} ms`;
  console.log(`| this process's garbage collections per 1,000 deliveries: minor (scavenges), their time | ${perThousand(collections.minor)} |`);
  console.log(`| the same, major (mark-compact) | ${perThousand(collections.major)} |`);
  console.log(`| PostgreSQL CPU per delivery | ${(serverMs / DUE).toFixed(3)} ms |`);
  console.log(`| the outbox's statements' execution time per delivery | ${(execMs / DUE).toFixed(3)} ms |`);
  console.log(`| WAL written per delivery (claim, send, outcome; every index entry included) | ${num(walBytes / DUE)} bytes |`);
  console.log(`| outbox row updates per delivery, and the share of them heap-only (HOT: no index entry written) | ${(updates / DUE).toFixed(2)}, ${Math.round((100 * hotUpdates) / Math.max(updates, 1))} % |`);
  console.log('');
  console.log(statementTable(statements, (calls) => calls / DUE, 'delivery').join('\n'));
};

await runBenchmark(main);
