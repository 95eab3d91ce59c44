import { sql, type Kysely } from 'kysely';

export const up = async (db: Kysely<unknown>): Promise<void> => {
  await db.schema
    .createTable('projection_checkpoints')
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('position', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('updated_at', 'timestamptz', (column) => column.notNull().defaultTo(sql`now()`))
    .addColumn('rebuilt_at', 'timestamptz')
    .addPrimaryKeyConstraint('projection_checkpoints_pkey', ['name'])
    .addCheckConstraint('projection_checkpoints_position_check', sql`position >= 0`)
    .execute();
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await db.schema.dropTable('projection_checkpoints').execute();
};
