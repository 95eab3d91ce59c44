import { sql, type Kysely } from 'kysely';

/** The chains and tokens each organization switched off (ChainDisabled / TokenDisabled events). */
export const up = async (db: Kysely<unknown>): Promise<void> => {
  await db.schema
    .alterTable('organizations')
    .addColumn('disabled_chain_ids', sql`text[]`, (column) => column.notNull().defaultTo(sql`'{}'::text[]`))
    .addColumn('disabled_token_ids', sql`text[]`, (column) => column.notNull().defaultTo(sql`'{}'::text[]`))
    .execute();
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await db.schema.alterTable('organizations').dropColumn('disabled_chain_ids').dropColumn('disabled_token_ids').execute();
};
