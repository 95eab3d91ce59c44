import { sleep } from './api.js';

/** What waiting for a quiet service found: how long it took, and the CPU of the last window. */
export interface QuietWait {
  waitedMs: number;
  /** the service's processes and its PostgreSQL together over the last window, in cores */
  lastCores: number;
  /** false when the wait gave up at its limit with the service still busy */
  quiet: boolean;
}

export interface QuietOptions {
  /** CPU used so far by each of the service's processes and its PostgreSQL, ms (serviceAndServerCpu) */
  cpuMs: () => Promise<Map<string, number>>;
  /** give up after this long (the phase then starts beside whatever still runs) */
  maxMs: number;
  /** quiet: the service and PostgreSQL together under this many cores over one window */
  idleCores?: number;
  windowMs?: number;
}

/** one reading's window, ms */
const MIN_WINDOW_MS = 2_000;

const total = (byProcess: Map<string, number>) => [...byProcess.values()].reduce((sum, ms) => sum + ms, 0);

/**
 * Reads what the service is busy with before a load phase: the work an earlier phase left behind
 * (settling its withdrawals, sending its webhooks, its sweeps), which on two cores takes a share
 * of the CPU the next phase is measured with. Waits, reading window after window, while it is
 * above `idleCores`, at most `maxMs` (0: one reading, no wait).
 */
export const untilQuiet = async ({ cpuMs, maxMs, idleCores = 0.25, windowMs = MIN_WINDOW_MS }: QuietOptions): Promise<QuietWait> => {
  const startedAt = performance.now();
  let before = total(await cpuMs());
  for (;;) {
    const windowStartedAt = performance.now();
    await sleep(windowMs);
    const after = total(await cpuMs());
    const lastCores = (after - before) / (performance.now() - windowStartedAt);
    before = after;
    const waitedMs = performance.now() - startedAt;
    if (lastCores <= idleCores) return { waitedMs, lastCores, quiet: true };
    if (waitedMs >= maxMs) return { waitedMs, lastCores, quiet: false };
  }
};

export const describeQuietWait = (wait: QuietWait): string =>
  `${wait.lastCores.toFixed(2)} cores of the service and PostgreSQL` +
  (wait.waitedMs < 2 * MIN_WINDOW_MS ? '' : wait.quiet ? ` (quiet after ${(wait.waitedMs / 1000).toFixed(0)} s)` : ` (still busy after ${(wait.waitedMs / 1000).toFixed(0)} s)`);
