import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/database.js';
import type { EventStore } from '../eventstore/port.js';
import type { Projection } from './projection.js';
import { lagInEvents, projectionProgress } from './progress.js';
import { NOT_PARKED } from '../webhooks/claims.js';

/**
 * The read-model figures GET /metrics reports, each one indexed query: the outbox's backlog (the
 * pending rows due or being attempted, the partial index of deliveries not parked for a URL:
 * those are parked, not late, and a long history of organizations without a URL holds hundreds of
 * thousands of them), open sweeps (partial index on
 * open rows), the withdrawal counts kept by triggers, and per projection one row of its filter's index.
 */
export const operationsFigures = (db: Kysely<Database>, store: Pick<EventStore, 'headPosition' | 'readAll'>, projections: readonly Projection[]) => ({
  projectionLag: async (): Promise<Record<string, number>> => {
    const [head, progress] = await Promise.all([store.headPosition(), projectionProgress(db, store, projections)]);
    return Object.fromEntries(progress.map((entry) => [entry.name, lagInEvents(entry, head)]));
  },
  outbox: async () => {
    const { rows } = await sql<{ pending: string; oldest: Date | null }>`
      select count(*) as pending, min(created_at) as oldest from webhook_deliveries
       where ${NOT_PARKED}
    `.execute(db);
    const oldest = rows[0]?.oldest ?? null;
    return { pending: Number(rows[0]?.pending ?? 0), oldestAgeSeconds: oldest ? Math.max(0, (Date.now() - oldest.getTime()) / 1000) : 0 };
  },
  withdrawalsByStatus: async (): Promise<Record<string, number>> => {
    const { rows } = await sql<{ status: string; count: string }>`select status, count from withdrawal_status_counts`.execute(db);
    return Object.fromEntries(rows.map((row) => [row.status, Number(row.count)]));
  },
  sweepsPending: async (): Promise<number> => {
    const { rows } = await sql<{ pending: string }>`select count(*) as pending from sweep_queue where done_at is null`.execute(db);
    return Number(rows[0]?.pending ?? 0);
  },
});
