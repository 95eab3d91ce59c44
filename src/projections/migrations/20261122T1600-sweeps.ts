import { sql, type Kysely } from 'kysely';

export const up = async (db: Kysely<unknown>): Promise<void> => {
  // credited EVM/Tron deposits to sweep (projection `sweepQueue`); the sweeper moves the attempt columns
  await db.schema
    .createTable('sweep_queue')
    .addColumn('chain_id', 'text', (column) => column.notNull())
    .addColumn('tx_hash', 'text', (column) => column.notNull())
    .addColumn('output_index', 'integer', (column) => column.notNull())
    .addColumn('seq', 'bigint', (column) => column.notNull())
    .addColumn('queued_at', 'timestamptz', (column) => column.notNull())
    .addColumn('next_attempt_at', 'timestamptz', (column) => column.notNull())
    .addColumn('attempts', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('done_at', 'timestamptz')
    .addPrimaryKeyConstraint('sweep_queue_pkey', ['chain_id', 'tx_hash', 'output_index'])
    .execute();
  await db.schema.createIndex('sweep_queue_open_idx').on('sweep_queue').columns(['chain_id', 'seq']).where(sql.ref('done_at'), 'is', null).execute();

  // one row per sweep (projection `sweeps`)
  await db.schema
    .createTable('sweeps')
    .addColumn('chain_id', 'text', (column) => column.notNull())
    .addColumn('tx_hash', 'text', (column) => column.notNull())
    .addColumn('output_index', 'integer', (column) => column.notNull())
    .addColumn('org_id', 'text', (column) => column.notNull())
    .addColumn('token_id', 'text', (column) => column.notNull())
    .addColumn('kind', 'text', (column) => column.notNull())
    .addColumn('amount', sql`numeric(78,0)`, (column) => column.notNull())
    .addColumn('deposit_address', 'text', (column) => column.notNull())
    .addColumn('settlement_address', 'text', (column) => column.notNull())
    .addColumn('gas_wallet_address', 'text')
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('reason', 'text')
    .addColumn('top_up_tx_hash', 'text')
    .addColumn('top_up_amount', sql`numeric(78,0)`)
    .addColumn('gas_spent', sql`numeric(78,0)`)
    .addColumn('sweep_tx_hash', 'text')
    .addColumn('swept_amount', sql`numeric(78,0)`)
    .addColumn('fee', sql`numeric(78,0)`)
    .addColumn('fee_charged', sql`numeric(78,0)`)
    .addColumn('created_at', 'timestamptz', (column) => column.notNull())
    .addColumn('updated_at', 'timestamptz', (column) => column.notNull())
    .addPrimaryKeyConstraint('sweeps_pkey', ['chain_id', 'tx_hash', 'output_index'])
    .addCheckConstraint('sweeps_kind_check', sql`kind in ('native', 'token')`)
    .execute();
  await db.schema.createIndex('sweeps_org_status_idx').on('sweeps').columns(['org_id', 'status']).execute();
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await db.schema.dropTable('sweeps').execute();
  await db.schema.dropTable('sweep_queue').execute();
};
