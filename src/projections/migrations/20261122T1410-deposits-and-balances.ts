import { sql, type Kysely } from 'kysely';

export const up = async (db: Kysely<unknown>): Promise<void> => {
  // one row per detected, not reverted deposit (projection `deposits`)
  await db.schema
    .createTable('deposits')
    .addColumn('chain_id', 'text', (column) => column.notNull())
    .addColumn('tx_hash', 'text', (column) => column.notNull())
    .addColumn('output_index', 'integer', (column) => column.notNull())
    // the global position of the detection: deterministic on rebuild, and the newest-first page order
    .addColumn('seq', 'bigint', (column) => column.notNull())
    .addColumn('org_id', 'text')
    .addColumn('external_user_id', 'text')
    .addColumn('account_chain_id', 'text')
    .addColumn('token_id', 'text', (column) => column.notNull())
    .addColumn('amount', sql`numeric(78,0)`, (column) => column.notNull())
    .addColumn('sender_address', 'text', (column) => column.notNull())
    .addColumn('to_address', 'text', (column) => column.notNull())
    .addColumn('destination_tag', 'bigint')
    .addColumn('block_number', 'bigint', (column) => column.notNull())
    .addColumn('block_hash', 'text', (column) => column.notNull())
    .addColumn('credit', 'text', (column) => column.notNull())
    .addColumn('confirmations', 'integer', (column) => column.notNull())
    .addColumn('confirmed', 'boolean', (column) => column.notNull())
    .addColumn('created_at', 'timestamptz', (column) => column.notNull())
    .addColumn('updated_at', 'timestamptz', (column) => column.notNull())
    .addPrimaryKeyConstraint('deposits_pkey', ['chain_id', 'tx_hash', 'output_index'])
    .addUniqueConstraint('deposits_seq_key', ['seq'])
    .addCheckConstraint('deposits_credit_check', sql`credit in ('credit', 'below_minimum', 'unattributed')`)
    .addCheckConstraint('deposits_amount_check', sql`amount > 0`)
    .execute();
  // the organization's lists show creditable deposits only
  await db.schema.createIndex('deposits_org_seq_idx').on('deposits').columns(['org_id', 'seq desc']).where(sql.ref('credit'), '=', 'credit').execute();
  await db.schema
    .createIndex('deposits_org_user_seq_idx')
    .on('deposits')
    .columns(['org_id', 'external_user_id', 'seq desc'])
    .where(sql.ref('credit'), '=', 'credit')
    .execute();

  // one row per organization and token (projection `balances`)
  await db.schema
    .createTable('balances')
    .addColumn('org_id', 'text', (column) => column.notNull())
    .addColumn('token_id', 'text', (column) => column.notNull())
    .addColumn('chain_id', 'text', (column) => column.notNull())
    .addColumn('available', sql`numeric(78,0)`, (column) => column.notNull())
    .addColumn('pending', sql`numeric(78,0)`, (column) => column.notNull())
    .addColumn('held', sql`numeric(78,0)`, (column) => column.notNull())
    .addColumn('updated_at', 'timestamptz', (column) => column.notNull())
    .addPrimaryKeyConstraint('balances_pkey', ['org_id', 'token_id'])
    .addCheckConstraint('balances_non_negative_check', sql`available >= 0 and pending >= 0 and held >= 0`)
    .execute();
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await db.schema.dropTable('balances').execute();
  await db.schema.dropTable('deposits').execute();
};
