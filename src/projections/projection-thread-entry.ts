import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { createPool } from '../db/pool.js';
import { createPostgresEventStore } from '../eventstore/postgres/postgres-event-store.js';
import type { EventStore } from '../eventstore/port.js';
import type { Logger, LogLevel } from '../log.js';
import { allProjections } from './registry.js';
import { ProjectionRunner } from './runner.js';
import { SharedProjectionReads } from './shared-reads.js';
import type { ProjectionThreadData, ProjectionThreadMessage, ProjectionThreadRequest } from './projection-thread.js';

/**
 * The projection thread (projection-thread.ts): every projection's runner and their shared read of
 * the store, on connections of this thread's own. Its log lines and batch figures go to the
 * thread that started it; a `stop` message stops the runners (each finishes its batch in flight)
 * and closes the connections, and the thread ends.
 */
const port = parentPort!;
const data = workerData as ProjectionThreadData;
const post = (message: ProjectionThreadMessage) => port.postMessage(message);

/** fields that do not survive the copy to the other thread (a function, a socket) go as their text */
const postLog = (level: LogLevel, msg: string, fields: Record<string, unknown>) => {
  try {
    post({ kind: 'log', level, msg, fields });
  } catch {
    post({ kind: 'log', level, msg, fields: Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, String(value)])) });
  }
};

const forwardingLogger = (base: Record<string, unknown>): Logger => ({
  debug: (msg, fields) => postLog('debug', msg, { ...base, ...fields }),
  info: (msg, fields) => postLog('info', msg, { ...base, ...fields }),
  warn: (msg, fields) => postLog('warn', msg, { ...base, ...fields }),
  error: (msg, fields) => postLog('error', msg, { ...base, ...fields }),
  child: (fields) => forwardingLogger({ ...base, ...fields }),
});

const logger = forwardingLogger({});
const pool = createPool(data.database, { max: data.readPoolSize, purpose: 'projections' });

const openStore = async (): Promise<EventStore> => {
  if (!data.eventStoreUrl) return createPostgresEventStore({ pool, listenConfig: data.database, logger });
  const { createKurrentDbEventStore } = await import('../eventstore/kurrentdb/kurrentdb-event-store.js');
  return createKurrentDbEventStore(data.eventStoreUrl);
};

const store = await openStore();
const projections = allProjections();
const reads = new SharedProjectionReads(store, projections.map(({ filter }) => filter));
const runners = projections.map(
  (projection) =>
    new ProjectionRunner({
      projection,
      store,
      reads,
      database: data.database,
      logger,
      recordBatch: (name, events, applySeconds, lastRecordedAt) => post({ kind: 'batch', projection: name, events, applySeconds, lastRecordedAt }),
    }),
);
for (const runner of runners) runner.start();

/** this thread's event-loop delay, sampled as the runtime's default metrics sample the main thread's */
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
const loopDelaySeconds = () => {
  const seconds = (nanoseconds: number) => nanoseconds / 1e9;
  const answer = { p50: seconds(loopDelay.percentile(50)), p90: seconds(loopDelay.percentile(90)), p99: seconds(loopDelay.percentile(99)), max: seconds(loopDelay.max) };
  loopDelay.reset();
  return answer;
};

let stopped: Promise<void> | null = null;
const stop = async () => {
  loopDelay.disable();
  await Promise.all(runners.map((runner) => runner.stop()));
  await store.close();
  await pool.end().catch(() => undefined);
  port.close();
};

port.on('message', (message: ProjectionThreadRequest) => {
  if (message.kind === 'loopDelay') post({ kind: 'loopDelay', id: message.id, seconds: loopDelaySeconds() });
  else stopped ??= stop();
});
