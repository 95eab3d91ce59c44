import { sql, type Kysely } from 'kysely';

/**
 * The attempt log has one index instead of two: its primary key is `(delivery_id, id)`, which
 * both finds a delivery's attempts (what operators query; `webhook_attempts_delivery_id_idx` on
 * `(delivery_id, started_at)` did that) and turns away a second row for one attempt (what the
 * primary key on `id` did: an attempt's id is the claim token its claim drew, one per delivery and
 * claim, and every statement that writes an attempt names its delivery). Every attempt logged
 * wrote an entry into both: one index entry, and one record of the write-ahead log, fewer per
 * attempt. A delivery's attempts come in claim order by `id` as well (a time-ordered UUID drawn at
 * the claim); `started_at` is the claim's time.
 */
export const up = async (db: Kysely<unknown>): Promise<void> => {
  await sql`alter table webhook_attempts drop constraint webhook_attempts_pkey`.execute(db);
  await sql`alter table webhook_attempts add constraint webhook_attempts_pkey primary key (delivery_id, id)`.execute(db);
  await sql`drop index webhook_attempts_delivery_id_idx`.execute(db);
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await sql`create index webhook_attempts_delivery_id_idx on webhook_attempts (delivery_id, started_at)`.execute(db);
  await sql`alter table webhook_attempts drop constraint webhook_attempts_pkey`.execute(db);
  await sql`alter table webhook_attempts add constraint webhook_attempts_pkey primary key (id)`.execute(db);
};
