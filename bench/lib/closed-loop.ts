import { msSince, perSecond, summarize, type LatencySummary } from './stats.js';

/** One client of a closed-loop run: each call appends once and resolves when it is durable. */
export type AppendOnce = () => Promise<void>;

export interface ClosedLoopOptions {
  clients: number;
  warmupSeconds: number;
  seconds: number;
  /** builds one client's append function (its own streams and expected revisions) */
  newClient: () => AppendOnce;
  /** aborted on Ctrl-C */
  interrupt: AbortSignal;
}

export interface ClosedLoopFigures {
  appends: number;
  elapsedMs: number;
  appendsPerSecond: number;
  latency: LatencySummary;
}

/**
 * `clients` concurrent loops, each awaiting its own appends back to back, as pgbench's clients do:
 * a warm-up, then the measured window. Appends started inside the window count; the window ends at
 * the last of them to finish, so no append is cut in half.
 */
export const runClosedLoop = async (options: ClosedLoopOptions): Promise<ClosedLoopFigures> => {
  const measureFrom = process.hrtime.bigint() + BigInt(Math.round(options.warmupSeconds * 1e9));
  const until = measureFrom + BigInt(Math.round(options.seconds * 1e9));
  // one failing client (or Ctrl-C) stops them all
  const stop = new AbortController();
  const onInterrupt = () => stop.abort();
  options.interrupt.addEventListener('abort', onInterrupt, { once: true });

  const runClient = async (appendOnce: AppendOnce) => {
    const latencies: number[] = [];
    let lastEnd = measureFrom;
    while (!stop.signal.aborted) {
      const start = process.hrtime.bigint();
      if (start >= until) break;
      await appendOnce();
      const end = process.hrtime.bigint();
      if (start >= measureFrom) {
        latencies.push(msSince(start, end));
        lastEnd = end;
      }
    }
    return { latencies, lastEnd };
  };

  const outcomes = await Promise.allSettled(
    Array.from({ length: options.clients }, () =>
      runClient(options.newClient()).catch((error: unknown) => {
        stop.abort();
        throw error;
      }),
    ),
  );
  options.interrupt.removeEventListener('abort', onInterrupt);
  options.interrupt.throwIfAborted();
  const failed = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  const runs = outcomes.map((outcome) => (outcome as PromiseFulfilledResult<Awaited<ReturnType<typeof runClient>>>).value);
  const latencies = runs.flatMap((run) => run.latencies);
  const lastEnd = runs.reduce((max, run) => (run.lastEnd > max ? run.lastEnd : max), measureFrom);
  const elapsedMs = msSince(measureFrom, lastEnd);
  return { appends: latencies.length, elapsedMs, appendsPerSecond: perSecond(latencies.length, elapsedMs), latency: summarize(latencies) };
};
