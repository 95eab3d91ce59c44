import { sql, type Kysely } from 'kysely';

export const up = async (db: Kysely<unknown>): Promise<void> => {
  // one row per withdrawal (projection `withdrawals`): the columns lists filter and page on, and
  // the withdrawal as its events leave it (`state`), from which every answer and webhook is drawn
  await db.schema
    .createTable('withdrawals')
    .addColumn('id', 'text', (column) => column.notNull())
    // the global position of the request: deterministic on rebuild, and the newest-first page order
    .addColumn('seq', 'bigint', (column) => column.notNull())
    .addColumn('org_id', 'text', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('chain_id', 'text', (column) => column.notNull())
    .addColumn('token_id', 'text', (column) => column.notNull())
    .addColumn('amount', sql`numeric(78,0)`, (column) => column.notNull())
    .addColumn('reference', 'text', (column) => column.notNull())
    .addColumn('txn_hash', 'text')
    .addColumn('state', 'jsonb', (column) => column.notNull())
    .addColumn('created_at', 'timestamptz', (column) => column.notNull())
    .addColumn('updated_at', 'timestamptz', (column) => column.notNull())
    .addPrimaryKeyConstraint('withdrawals_pkey', ['id'])
    .addUniqueConstraint('withdrawals_seq_key', ['seq'])
    .addUniqueConstraint('withdrawals_org_reference_key', ['org_id', 'reference'])
    .addCheckConstraint('withdrawals_amount_check', sql`amount > 0`)
    .addCheckConstraint('withdrawals_status_check', sql`status in ('Pending', 'PendingApproval', 'Processing', 'Completed', 'Failed', 'Cancelled')`)
    .execute();
  await db.schema.createIndex('withdrawals_org_seq_idx').on('withdrawals').columns(['org_id', 'seq desc']).execute();
  await db.schema.createIndex('withdrawals_org_status_seq_idx').on('withdrawals').columns(['org_id', 'status', 'seq desc']).execute();
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await db.schema.dropTable('withdrawals').execute();
};
