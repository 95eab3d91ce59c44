import { sql, type Kysely } from 'kysely';

/**
 * Every claim and every outcome moves a delivery's `next_attempt_at`, which an index holds, so no
 * update of the outbox is a heap-only one: each writes a new entry into every index of the table.
 * `webhook_deliveries_seq_key` was one of them, for nothing: `seq` is `generated always as
 * identity`, unique by construction (an insert cannot give it a value), and the lists page
 * through `(org_id, seq)` and `(org_id, status, seq)`, which stay. One index write fewer per
 * enqueue, claim and outcome.
 */
export const up = async (db: Kysely<unknown>): Promise<void> => {
  await sql`alter table webhook_deliveries drop constraint webhook_deliveries_seq_key`.execute(db);
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await sql`alter table webhook_deliveries add constraint webhook_deliveries_seq_key unique (seq)`.execute(db);
};
