import { sql, type Kysely } from 'kysely';

/**
 * A rebuilt projection equals the live one: `sweep_queue` loses the columns only the sweeper wrote
 * (`attempts`, `next_attempt_at`; its set moved their open rows to `sweep_attempts` first), and
 * `done_at` is now set by the sweep's final event. Rows closed before keep the sweeper's time until
 * a rebuild sets the event's.
 */
export const up = async (db: Kysely<unknown>): Promise<void> => {
  await db.schema.alterTable('sweep_queue').dropColumn('next_attempt_at').dropColumn('attempts').execute();
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await db.schema.alterTable('sweep_queue').addColumn('attempts', 'integer', (column) => column.notNull().defaultTo(0)).addColumn('next_attempt_at', 'timestamptz').execute();
  await sql`update sweep_queue set next_attempt_at = queued_at`.execute(db);
  await sql`alter table sweep_queue alter column next_attempt_at set not null`.execute(db);
};
