import { sql, type Kysely } from 'kysely';

/**
 * The outbox's due deliveries have one index: webhook_deliveries_org_due_idx, per organization in
 * due order (the claim's fair shares walk it). The first one, on `next_attempt_at` alone, is
 * dropped: its readers (the dispatcher's next-due look, the exhausted-delivery check, the /metrics
 * gauges) read the per-organization index now, and every claim, every retry and every enqueue
 * wrote an entry into both. One index entry fewer per delivery enqueued, claimed or retried.
 */
export const up = async (db: Kysely<unknown>): Promise<void> => {
  await sql`drop index webhook_deliveries_due_idx`.execute(db);
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await sql`create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at) where status = 'pending'`.execute(db);
};
