/**
 * Waits `ms`, or less once `signal` aborts (a worker's stop()). The abort listener leaves with the
 * pause: workers pause between every pass, thousands of times, and must not pile listeners up.
 */
export const pauseUnlessStopped = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const wake = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', wake);
      resolve();
    };
    const timer = setTimeout(wake, ms);
    signal.addEventListener('abort', wake, { once: true });
  });

/** The delay before retrying after the n-th consecutive failure: doubling from `firstMs`, capped at `maxMs`. */
export const backoffDelayMs = (attempt: number, firstMs: number, maxMs: number): number => Math.min(maxMs, firstMs * 2 ** Math.min(attempt, 7));

/**
 * How long from `nowMs` to the clock's next multiple of `periodMs` (never 0: a time on a multiple
 * waits a whole period). Workers that pause this long wake together, whenever each finished.
 */
export const msUntilNextTick = (nowMs: number, periodMs: number): number => periodMs - (nowMs % periodMs);
