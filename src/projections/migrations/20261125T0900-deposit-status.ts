import { sql, type Kysely } from 'kysely';

/**
 * CONTRACT §6: a deposit's row says where it stands (`detected`, `confirmed`, `reverted`). A
 * reverted deposit now keeps its row (the lists show it as reverted) until the same transfer is
 * detected again; existing rows take their status from `confirmed`.
 */
export const up = async (db: Kysely<unknown>): Promise<void> => {
  await db.schema.alterTable('deposits').addColumn('status', 'text', (column) => column.notNull().defaultTo('detected')).execute();
  await sql`update deposits set status = 'confirmed' where confirmed`.execute(db);
  await db.schema.alterTable('deposits').alterColumn('status', (column) => column.dropDefault()).execute();
  await db.schema
    .alterTable('deposits')
    .addCheckConstraint('deposits_status_check', sql`status in ('detected', 'confirmed', 'reverted')`)
    .execute();
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await sql`delete from deposits where status = 'reverted'`.execute(db);
  await db.schema.alterTable('deposits').dropConstraint('deposits_status_check').execute();
  await db.schema.alterTable('deposits').dropColumn('status').execute();
};
