/**
 * Event store benchmark: the PostgreSQL adapter on a throwaway embedded server with default
 * durability. Appends (1 and 10 events, 1/8/64 writers), then a catch-up read of everything.
 * Prints figures only; nothing asserts timing.
 *
 *   npm run bench:eventstore                 # 5 s per scenario
 *   BENCH_SECONDS=2 npm run bench:eventstore
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type pg from 'pg';
import { migrateToLatest } from '../src/db/migrate.js';
import { createPool } from '../src/db/pool.js';
import type { EventStore } from '../src/eventstore/port.js';
import { eventStoreMigrations } from '../src/eventstore/postgres/migrations/index.js';
import { createPostgresEventStore } from '../src/eventstore/postgres/postgres-event-store.js';
import { createLogger } from '../src/log.js';
import { depositEvent } from './lib/deposit-event.js';
import { runBenchmark, type Lifecycle } from './lib/lifecycle.js';
import { msSince, perSecond, summarize, type LatencySummary } from './lib/stats.js';
import { formatTable, num } from './lib/table.js';
import { startTempPostgres } from './lib/temp-postgres.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const WARMUP_SECONDS = Math.min(1, SECONDS / 2);
const WRITER_COUNTS = [1, 8, 64];
const EVENTS_PER_APPEND = [1, 10];
const STREAMS_PER_WRITER = 4;
const READ_BATCH = 1000;

const progress = (message: string) => console.error(`· ${message}`);

// ---------------------------------------------------------------- appends

interface AppendScenario {
  writers: number;
  eventsPerAppend: number;
}

interface AppendFigures extends AppendScenario {
  appends: number;
  elapsedMs: number;
  latency: LatencySummary;
}

/**
 * One writer: cycles over its own streams, appending with the exact expected revision it tracks
 * (as a read-decide-append would), so there are no conflicts. Records latencies of appends started
 * inside the measured window.
 */
const runWriter = async (
  store: EventStore,
  scenario: AppendScenario,
  window: { measureFrom: bigint; until: bigint },
  stop: AbortSignal,
): Promise<{ latencies: number[]; lastEnd: bigint }> => {
  const streams = Array.from({ length: STREAMS_PER_WRITER }, () => ({ id: randomUUID(), revision: null as bigint | null }));
  const latencies: number[] = [];
  let lastEnd = window.measureFrom;
  for (let turn = 0; !stop.aborted; turn++) {
    const stream = streams[turn % streams.length]!;
    const events = Array.from({ length: scenario.eventsPerAppend }, (_, index) => depositEvent(stream.id, turn + index));
    const start = process.hrtime.bigint();
    if (start >= window.until) break;
    const result = await store.append(`account-${stream.id}`, stream.revision ?? 'no_stream', events);
    const end = process.hrtime.bigint();
    stream.revision = result.streams[0]!.revision;
    if (start >= window.measureFrom) {
      latencies.push(msSince(start, end));
      lastEnd = end;
    }
  }
  return { latencies, lastEnd };
};

const runAppendScenario = async (store: EventStore, scenario: AppendScenario, interrupt: AbortSignal): Promise<AppendFigures> => {
  const now = process.hrtime.bigint();
  const measureFrom = now + BigInt(Math.round(WARMUP_SECONDS * 1e9));
  const until = measureFrom + BigInt(Math.round(SECONDS * 1e9));
  // one failing writer (or Ctrl-C) stops them all
  const stop = new AbortController();
  const onInterrupt = () => stop.abort();
  interrupt.addEventListener('abort', onInterrupt, { once: true });
  const outcomes = await Promise.allSettled(
    Array.from({ length: scenario.writers }, () =>
      runWriter(store, scenario, { measureFrom, until }, stop.signal).catch((error: unknown) => {
        stop.abort();
        throw error;
      }),
    ),
  );
  interrupt.removeEventListener('abort', onInterrupt);
  interrupt.throwIfAborted();
  const failed = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  const runs = outcomes.map((outcome) => (outcome as PromiseFulfilledResult<Awaited<ReturnType<typeof runWriter>>>).value);
  const latencies = runs.flatMap((run) => run.latencies);
  const lastEnd = runs.reduce((max, run) => (run.lastEnd > max ? run.lastEnd : max), measureFrom);
  return { ...scenario, appends: latencies.length, elapsedMs: msSince(measureFrom, lastEnd), latency: summarize(latencies) };
};

const appendTable = (results: AppendFigures[]): string =>
  formatTable(
    [
      { header: 'scenario' },
      { header: 'writers', align: 'right' },
      { header: 'events/append', align: 'right' },
      { header: 'appends/s', align: 'right' },
      { header: 'events/s', align: 'right' },
      { header: 'p50 ms', align: 'right' },
      { header: 'p99 ms', align: 'right' },
      { header: 'max ms', align: 'right' },
    ],
    results.map((r) => {
      const appendsPerSecond = perSecond(r.appends, r.elapsedMs);
      return [
        r.eventsPerAppend === 1 ? 'append 1 event' : `append ${r.eventsPerAppend} events`,
        String(r.writers),
        String(r.eventsPerAppend),
        num(appendsPerSecond),
        num(appendsPerSecond * r.eventsPerAppend),
        num(r.latency.p50, 2),
        num(r.latency.p99, 2),
        num(r.latency.max, 2),
      ];
    }),
  );

// ---------------------------------------------------------------- catch-up reads

interface ReadFigures {
  events: number;
  batches: number;
  elapsedMs: number;
}

const readAllInBatches = async (store: EventStore, lifecycle: Lifecycle): Promise<ReadFigures> => {
  const start = process.hrtime.bigint();
  let afterPosition = 0n;
  let events = 0;
  let batches = 0;
  for (;;) {
    lifecycle.checkpoint();
    const batch = await store.readAll({ afterPosition, maxCount: READ_BATCH });
    if (batch.length === 0) break;
    events += batch.length;
    batches++;
    afterPosition = batch[batch.length - 1]!.position;
  }
  return { events, batches, elapsedMs: msSince(start) };
};

const subscribeUntilHead = async (store: EventStore, head: bigint, lifecycle: Lifecycle): Promise<ReadFigures> => {
  const start = process.hrtime.bigint();
  let events = 0;
  let batches = 0;
  if (head > 0n) {
    const subscription = store.subscribeToAll({ afterPosition: 0n, maxBatchSize: READ_BATCH });
    try {
      for await (const batch of subscription) {
        lifecycle.checkpoint();
        events += batch.length;
        batches++;
        if (batch[batch.length - 1]!.position >= head) break;
      }
    } finally {
      await subscription.close();
    }
  }
  return { events, batches, elapsedMs: msSince(start) };
};

const readLine = (label: string, figures: ReadFigures): string =>
  `${label.padEnd(32)} ${num(figures.events).padStart(9)} events in ${num(figures.elapsedMs / 1000, 2)} s ` +
  `(${num(figures.batches)} batches) = ${num(perSecond(figures.events, figures.elapsedMs))} events/s`;

// ---------------------------------------------------------------- machine

const machineInfo = async (pool: pg.Pool): Promise<string[]> => {
  const { rows } = await pool.query<{ version: string; fsync: string; synchronous_commit: string; wal_sync_method: string }>(
    `select version(), current_setting('fsync') as fsync, current_setting('synchronous_commit') as synchronous_commit,
            current_setting('wal_sync_method') as wal_sync_method`,
  );
  const settings = rows[0]!;
  const cpus = os.cpus();
  return [
    `machine: ${cpus.length} cpus (${cpus[0]?.model.trim() ?? 'unknown'}), ${num(os.totalmem() / 2 ** 30, 1)} GiB, ${os.platform()} ${os.release()}`,
    `node:    ${process.version}`,
    `server:  ${settings.version}`,
    `durability: fsync=${settings.fsync} synchronous_commit=${settings.synchronous_commit} wal_sync_method=${settings.wal_sync_method}; data in ${os.tmpdir()}`,
  ];
};

// ---------------------------------------------------------------- main

const main = async (lifecycle: Lifecycle): Promise<void> => {
  if (!(SECONDS > 0)) throw new Error(`BENCH_SECONDS must be a positive number, not ${process.env.BENCH_SECONDS}`);
  const logger = createLogger('warn', { component: 'bench' }, (line) => process.stderr.write(line + '\n'));

  progress('starting embedded PostgreSQL in a temporary DATA_DIR');
  const { server } = await startTempPostgres(lifecycle, logger);
  lifecycle.checkpoint();
  const config = server.connection('ledgergate');
  const pool = createPool(config, { max: Math.max(...WRITER_COUNTS), purpose: 'bench' });
  lifecycle.onTeardown('close the pool', () => pool.end());
  await migrateToLatest(pool, eventStoreMigrations);
  const store = createPostgresEventStore({ pool, listenConfig: config, logger });
  lifecycle.onTeardown('close the event store', () => store.close());

  const appendResults: AppendFigures[] = [];
  for (const eventsPerAppend of EVENTS_PER_APPEND) {
    for (const writers of WRITER_COUNTS) {
      progress(`${writers} writer(s) × ${eventsPerAppend} event(s)/append: ${WARMUP_SECONDS} s warm-up + ${SECONDS} s`);
      appendResults.push(await runAppendScenario(store, { writers, eventsPerAppend }, lifecycle.signal));
    }
  }

  const head = await store.headPosition();
  progress(`catch-up reads of ${num(Number(head))} positions`);
  const readAll = await readAllInBatches(store, lifecycle);
  const subscribed = await subscribeUntilHead(store, head, lifecycle);

  console.log(appendTable(appendResults));
  console.log();
  console.log(readLine(`readAll, batches of ${READ_BATCH}`, readAll));
  console.log(readLine(`subscribeToAll, batches ≤ ${READ_BATCH}`, subscribed));
  console.log();
  for (const line of await machineInfo(pool)) console.log(line);
  console.log(`(${SECONDS} s per scenario after ${WARMUP_SECONDS} s warm-up; ${STREAMS_PER_WRITER} streams per writer)`);
};

await runBenchmark(main);
