import type { Worker } from 'node:worker_threads';
import type { PoolTarget } from '../db/pool.js';
import { backoffDelayMs, pauseUnlessStopped } from '../lib/pause.js';
import { startModuleThread } from '../lib/module-thread.js';
import type { Logger, LogLevel } from '../log.js';
import { observeProjectionThreadLoopDelay, recordProjectionBatch } from '../observability/metrics.js';

/** What the projection thread is started with. */
export interface ProjectionThreadData {
  /** the database of the read models (and of the events, unless `eventStoreUrl`) */
  database: PoolTarget;
  /** KurrentDB's connection string when the events are there */
  eventStoreUrl?: string;
  /** connections for the runners' reads of the store (each runner also holds a session of its own) */
  readPoolSize: number;
}

/** What the projection thread tells the thread that started it. */
export type ProjectionThreadMessage =
  | { kind: 'log'; level: LogLevel; msg: string; fields: Record<string, unknown> }
  | { kind: 'batch'; projection: string; events: number; applySeconds: number; lastRecordedAt: Date }
  /** the answer to a `loopDelay` request: its event-loop delay since the last one, seconds by statistic */
  | { kind: 'loopDelay'; id: number; seconds: Record<string, number> };

/** What the projection thread is asked. */
export type ProjectionThreadRequest = { kind: 'stop' } | { kind: 'loopDelay'; id: number };

export interface ProjectionThreadOptions extends Omit<ProjectionThreadData, 'readPoolSize'> {
  logger: Logger;
}

/** the shared read's connection, and one for a runner reading on its own (catching up, or closing a gap) */
const READ_POOL_SIZE = 2;

/** how long a stop waits for the runners to finish their batches in flight before the thread is ended */
const STOP_TIMEOUT_MS = 10_000;
/** a thread that ran this long before it ended is started again after the shortest back-off */
const HEALTHY_RUN_MS = 60_000;
/** how long a scrape waits for the thread's event-loop delay before it leaves the figure out */
const LOOP_DELAY_ANSWER_MS = 1000;
/**
 * The thread's heap, bounded as the process's is (`npm start`'s flags): what it holds live is the
 * runners' batches, the shared read's queues and the live runners' memories of what they wrote.
 */
const RESOURCE_LIMITS = { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 12 };

/**
 * Every projection's live runner, and their shared read of the store, on a thread of their own.
 * In the workers process they shared one event loop with the webhook dispatcher's sends, the
 * chain workers and the devnet: an event's way to its checkpoint (a notification, a read, a batch
 * of one or two round trips) waited at every step for whatever held the loop, and the process's one
 * thread for its turn on the cores. Here the runners work as before (one session and advisory lock
 * each, one shared read; projection-thread-entry.ts), their log lines and batch figures come back
 * to this thread's logger and metrics. A thread that ends without being asked to (an uncaught
 * error, its heap cap) is started again after a back-off: the runners start from their checkpoints,
 * so nothing is lost or applied twice.
 */
export const startProjectionThread = (options: ProjectionThreadOptions): { stop(): Promise<void> } => {
  const { logger } = options;
  const stopping = new AbortController();
  const data: ProjectionThreadData = {
    database: options.database,
    ...(options.eventStoreUrl ? { eventStoreUrl: options.eventStoreUrl } : {}),
    readPoolSize: READ_POOL_SIZE,
  };
  let current: Worker | null = null;
  const request = (thread: Worker, message: ProjectionThreadRequest) => thread.postMessage(message);
  /** the scrapes waiting for the thread's event-loop delay, by request id */
  const delayAsked = new Map<number, (seconds: Record<string, number> | null) => void>();
  let lastDelayRequest = 0;
  const stopObservingDelay = observeProjectionThreadLoopDelay(
    () =>
      new Promise((resolve) => {
        if (!current) return resolve(null);
        const id = ++lastDelayRequest;
        const timer = setTimeout(() => delayAsked.get(id)?.(null), LOOP_DELAY_ANSWER_MS);
        delayAsked.set(id, (seconds) => {
          clearTimeout(timer);
          delayAsked.delete(id);
          resolve(seconds);
        });
        request(current, { kind: 'loopDelay', id });
      }),
  );
  const onMessage = (message: ProjectionThreadMessage) => {
    if (message.kind === 'batch') recordProjectionBatch(message.projection, message.events, message.applySeconds, message.lastRecordedAt);
    else if (message.kind === 'loopDelay') delayAsked.get(message.id)?.(message.seconds);
    else logger[message.level](message.msg, message.fields);
  };
  /** one thread's life: resolves when it ended (or could not start), whatever the cause */
  const runOnce = () =>
    new Promise<void>((resolve) => {
      let thread: Worker;
      try {
        thread = startModuleThread(new URL(`./projection-thread-entry${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url), {
          workerData: data,
          resourceLimits: RESOURCE_LIMITS,
        });
      } catch (error) {
        logger.error('projections: the thread could not start', { error });
        return resolve();
      }
      current = thread;
      thread.on('message', onMessage);
      thread.on('error', (error) => logger.error('projections: the thread failed', { error }));
      thread.once('exit', () => {
        current = null;
        resolve();
      });
    });
  const running = (async () => {
    let failures = 0;
    while (!stopping.signal.aborted) {
      const startedAtMs = Date.now();
      await runOnce();
      if (stopping.signal.aborted) break;
      // a thread that ran a while before it ended starts the back-off again from its first step
      failures = Date.now() - startedAtMs > HEALTHY_RUN_MS ? 1 : failures + 1;
      logger.error('projections: the thread ended; starting it again', { failures });
      await pauseUnlessStopped(backoffDelayMs(failures, 250, 30_000), stopping.signal);
    }
  })();
  return {
    stop: async () => {
      stopping.abort();
      stopObservingDelay();
      const thread: Worker | null = current;
      if (thread) {
        request(thread, { kind: 'stop' });
        const timer = setTimeout(() => void thread.terminate(), STOP_TIMEOUT_MS);
        await running;
        clearTimeout(timer);
      }
      await running;
    },
  };
};
