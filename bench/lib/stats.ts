/** Latency statistics over a run's samples (milliseconds). */
export interface LatencySummary {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentile of an ascending array; NaN when empty. */
export const percentile = (sorted: ArrayLike<number>, p: number): number => {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
};

export const summarize = (samples: readonly number[]): LatencySummary => {
  const sorted = Float64Array.from(samples).sort();
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
  };
};

/** Milliseconds elapsed since a `process.hrtime.bigint()` reading. */
export const msSince = (start: bigint, end: bigint = process.hrtime.bigint()): number => Number(end - start) / 1e6;

export const perSecond = (count: number, ms: number): number => (ms > 0 ? (count * 1000) / ms : Number.NaN);
