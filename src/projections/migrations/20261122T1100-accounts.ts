import type { Kysely } from 'kysely';

export const up = async (db: Kysely<unknown>): Promise<void> => {
  await db.schema
    .createTable('accounts')
    .addColumn('seq', 'bigint', (column) => column.generatedAlwaysAsIdentity())
    .addColumn('org_deposit_account_id', 'text', (column) => column.notNull())
    .addColumn('org_id', 'text', (column) => column.notNull())
    .addColumn('chain_id', 'text', (column) => column.notNull())
    .addColumn('external_user_id', 'text', (column) => column.notNull())
    .addColumn('address', 'text', (column) => column.notNull())
    .addColumn('destination_tag', 'text')
    .addColumn('created_at', 'timestamptz', (column) => column.notNull())
    .addColumn('updated_at', 'timestamptz', (column) => column.notNull())
    .addPrimaryKeyConstraint('accounts_pkey', ['org_deposit_account_id'])
    .addUniqueConstraint('accounts_org_chain_user_key', ['org_id', 'chain_id', 'external_user_id'])
    .execute();
  await db.schema.createIndex('accounts_org_seq_idx').on('accounts').columns(['org_id', 'seq desc']).execute();
  // deposits are matched to accounts by address (and tag, on XRP)
  await db.schema.createIndex('accounts_chain_address_idx').on('accounts').columns(['chain_id', 'address', 'destination_tag']).execute();
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await db.schema.dropTable('accounts').execute();
};
