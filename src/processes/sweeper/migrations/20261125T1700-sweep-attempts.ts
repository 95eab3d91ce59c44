import { sql, type Kysely } from 'kysely';

/**
 * The sweeper's own schedule per queued deposit (failed attempts in a row, the next try, deposits
 * found not to sweep): it was kept in `sweep_queue`, a read model, whose rebuild reset it. A
 * database that had those columns hands their open rows over here first; the read models' next
 * migration then drops them.
 */
export const up = async (db: Kysely<unknown>): Promise<void> => {
  await db.schema
    .createTable('sweep_attempts')
    .addColumn('chain_id', 'text', (column) => column.notNull())
    .addColumn('tx_hash', 'text', (column) => column.notNull())
    .addColumn('output_index', 'integer', (column) => column.notNull())
    .addColumn('attempts', 'integer', (column) => column.notNull())
    .addColumn('next_attempt_at', 'timestamptz', (column) => column.notNull())
    .addColumn('done_at', 'timestamptz')
    .addPrimaryKeyConstraint('sweep_attempts_pkey', ['chain_id', 'tx_hash', 'output_index'])
    .execute();
  const { rows } = await sql<{ present: boolean }>`
    select exists (select 1 from information_schema.columns where table_schema = 'public' and table_name = 'sweep_queue' and column_name = 'attempts') as present
  `.execute(db);
  if (!rows[0]?.present) return;
  await sql`
    insert into sweep_attempts (chain_id, tx_hash, output_index, attempts, next_attempt_at, done_at)
    select chain_id, tx_hash, output_index, attempts, next_attempt_at, null
    from sweep_queue
    where done_at is null and (attempts <> 0 or next_attempt_at <> queued_at)
  `.execute(db);
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await db.schema.dropTable('sweep_attempts').execute();
};
