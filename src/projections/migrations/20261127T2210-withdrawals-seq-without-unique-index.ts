import { sql, type Kysely } from 'kysely';

/**
 * `withdrawals_seq_key` enforced what cannot happen: `seq` is the global position of the
 * withdrawal's request, and a position is one event's (the event store's primary key), which
 * creates one row. No read looks a withdrawal up by `seq` alone: the lists page through
 * `(org_id, seq)` and `(org_id, status, seq)`, which stay. One index write fewer per withdrawal
 * inserted and per update that changes its status (no such update is a heap-only one), and one
 * unique index fewer for a rebuild's copy of the table to keep.
 */
export const up = async (db: Kysely<unknown>): Promise<void> => {
  await sql`alter table withdrawals drop constraint withdrawals_seq_key`.execute(db);
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await sql`alter table withdrawals add constraint withdrawals_seq_key unique (seq)`.execute(db);
};
