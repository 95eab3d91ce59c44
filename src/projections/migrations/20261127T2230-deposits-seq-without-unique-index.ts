import { sql, type Kysely } from 'kysely';

/**
 * `deposits_seq_key` enforced what cannot happen: `seq` is the position of the detection, one
 * event's, which inserts one row. No read finds a deposit by `seq` alone: the lists page through
 * the partial `(org_id, seq)` and `(org_id, external_user_id, seq)` indexes, which stay. One index
 * write fewer per deposit inserted and per confirmation (an update that is seldom a heap-only one:
 * the inserts behind a row fill its page before it is confirmed), and one unique index fewer for a
 * rebuild's copy of the table to keep.
 */
export const up = async (db: Kysely<unknown>): Promise<void> => {
  await sql`alter table deposits drop constraint deposits_seq_key`.execute(db);
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await sql`alter table deposits add constraint deposits_seq_key unique (seq)`.execute(db);
};
