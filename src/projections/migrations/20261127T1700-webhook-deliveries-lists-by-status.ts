import { sql, type Kysely } from 'kysely';

/**
 * The outbox's lists page newest first through `(org_id, status, seq)` alone: a list of one status
 * reads that status's entries, and a list of every status reads each status's newest entries side
 * by side and merges them (at most three times a page). `webhook_deliveries_org_seq_idx` on
 * `(org_id, seq)` is dropped: an outcome moves `status`, so it is no heap-only update, and every
 * delivery enqueued and every outcome recorded wrote an entry into it too. One index entry fewer
 * per delivery enqueued, delivered or retried.
 */
export const up = async (db: Kysely<unknown>): Promise<void> => {
  await sql`drop index webhook_deliveries_org_seq_idx`.execute(db);
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await sql`create index webhook_deliveries_org_seq_idx on webhook_deliveries (org_id, seq)`.execute(db);
};
