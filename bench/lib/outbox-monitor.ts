import type { ServiceDb } from './service-db.js';

/** One reading of the webhook outbox: deliveries due now and not yet taken by a dispatcher. */
export interface OutboxSample {
  atMs: number;
  due: number;
}

export interface OutboxMonitor {
  readonly samples: OutboxSample[];
  latest(): OutboxSample | undefined;
  stop(): Promise<void>;
}

const INTERVAL_MS = 500;

/**
 * Reads the outbox's backlog twice a second for the whole run: pending deliveries whose attempt
 * is due now and not in flight (an in-flight one holds an unexpired lease in `leased_until`, a
 * retry waits for its later time, so neither counts). The webhook rate is measured while this is above zero: the dispatcher had work waiting.
 */
export const startOutboxMonitor = (db: ServiceDb): OutboxMonitor => {
  const samples: OutboxSample[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const [row] = await db.query<{ due: string }>("select count(*)::text as due from webhook_deliveries where status = 'pending' and next_attempt_at <= now() and (leased_until is null or leased_until <= now())");
      samples.push({ atMs: performance.now(), due: Number(row?.due ?? 0) });
      await new Promise((resolve) => setTimeout(resolve, INTERVAL_MS));
    }
  })();
  return {
    samples,
    latest: () => samples[samples.length - 1],
    stop: async () => {
      running = false;
      await loop;
    },
  };
};

/**
 * Deliveries per second while the outbox had a backlog: over every interval between two readings
 * that both saw deliveries due, the distinct deliveries that arrived, divided by those intervals' time.
 */
export const sustainedRate = (samples: readonly OutboxSample[], arrivals: readonly number[]): { perSecond: number; backlogSeconds: number } => {
  let delivered = 0;
  let ms = 0;
  let cursor = 0;
  for (let index = 1; index < samples.length; index++) {
    const from = samples[index - 1]!;
    const to = samples[index]!;
    while (cursor < arrivals.length && arrivals[cursor]! < from.atMs) cursor++;
    if (from.due === 0 || to.due === 0) continue;
    let scan = cursor;
    while (scan < arrivals.length && arrivals[scan]! < to.atMs) scan++;
    delivered += scan - cursor;
    cursor = scan;
    ms += to.atMs - from.atMs;
  }
  return { perSecond: ms > 0 ? (delivered * 1000) / ms : Number.NaN, backlogSeconds: ms / 1000 };
};
