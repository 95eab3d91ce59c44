import { sql, type Kysely } from 'kysely';

/**
 * The devnet's chain state (src/chains/devnet). These tables belong to no projection: a rebuild
 * never empties them, and they survive restarts like a node's data directory would.
 */
export const up = async (db: Kysely<unknown>): Promise<void> => {
  // one row per chain: its head, and the row every mutation of that chain locks first
  await db.schema
    .createTable('devnet_chains')
    .addColumn('chain_id', 'text', (column) => column.notNull())
    .addColumn('head_number', 'integer', (column) => column.notNull())
    .addColumn('reorg_count', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('synthetic_count', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('fault', 'text')
    .addColumn('fault_remaining', 'integer', (column) => column.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('devnet_chains_pkey', ['chain_id'])
    .addCheckConstraint('devnet_chains_fault_check', sql`fault is null or fault in ('broadcast_error', 'revert')`)
    .execute();

  await db.schema
    .createTable('devnet_blocks')
    .addColumn('chain_id', 'text', (column) => column.notNull())
    .addColumn('number', 'integer', (column) => column.notNull())
    .addColumn('hash', 'text', (column) => column.notNull())
    .addColumn('parent_hash', 'text', (column) => column.notNull())
    .addColumn('timestamp', 'timestamptz', (column) => column.notNull())
    .addPrimaryKeyConstraint('devnet_blocks_pkey', ['chain_id', 'number'])
    .addUniqueConstraint('devnet_blocks_chain_hash_key', ['chain_id', 'hash'])
    .execute();

  // mempool order, kept across re-broadcasts of a dropped transaction
  await sql`create sequence devnet_transaction_seq`.execute(db);
  await db.schema
    .createTable('devnet_transactions')
    .addColumn('chain_id', 'text', (column) => column.notNull())
    .addColumn('hash', 'text', (column) => column.notNull())
    .addColumn('seq', 'bigint', (column) => column.notNull().defaultTo(sql`nextval('devnet_transaction_seq')`))
    .addColumn('kind', 'text', (column) => column.notNull())
    .addColumn('raw', 'text')
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('block_number', 'integer')
    .addColumn('sender', 'text')
    .addColumn('nonce', 'integer')
    .addColumn('fee', sql`numeric(78,0)`, (column) => column.notNull())
    .addColumn('error', 'text')
    .addPrimaryKeyConstraint('devnet_transactions_pkey', ['chain_id', 'hash'])
    .addCheckConstraint('devnet_transactions_kind_check', sql`kind in ('signed', 'credit', 'external')`)
    .addCheckConstraint('devnet_transactions_status_check', sql`status in ('pending', 'mined', 'failed', 'dropped')`)
    .execute();
  await db.schema.createIndex('devnet_transactions_status_idx').on('devnet_transactions').columns(['chain_id', 'status', 'seq']).execute();
  await db.schema.createIndex('devnet_transactions_block_idx').on('devnet_transactions').columns(['chain_id', 'block_number']).execute();
  await db.schema.createIndex('devnet_transactions_sender_idx').on('devnet_transactions').columns(['chain_id', 'sender']).execute();

  // a transaction's transfers; on Bitcoin they are its outputs (index = vout)
  await db.schema
    .createTable('devnet_transfers')
    .addColumn('chain_id', 'text', (column) => column.notNull())
    .addColumn('tx_hash', 'text', (column) => column.notNull())
    .addColumn('position', 'integer', (column) => column.notNull())
    .addColumn('transfer_index', 'integer', (column) => column.notNull())
    .addColumn('from_address', 'text', (column) => column.notNull())
    .addColumn('to_address', 'text', (column) => column.notNull())
    .addColumn('asset', 'text', (column) => column.notNull())
    .addColumn('amount', sql`numeric(78,0)`, (column) => column.notNull())
    .addColumn('destination_tag', 'bigint')
    .addPrimaryKeyConstraint('devnet_transfers_pkey', ['chain_id', 'tx_hash', 'position'])
    .execute();
  await db.schema.createIndex('devnet_transfers_to_idx').on('devnet_transfers').columns(['chain_id', 'to_address', 'asset']).execute();
  await db.schema.createIndex('devnet_transfers_from_idx').on('devnet_transfers').columns(['chain_id', 'from_address', 'asset']).execute();

  // Bitcoin: which outputs a transaction spends
  await db.schema
    .createTable('devnet_spends')
    .addColumn('chain_id', 'text', (column) => column.notNull())
    .addColumn('tx_hash', 'text', (column) => column.notNull())
    .addColumn('output_tx_hash', 'text', (column) => column.notNull())
    .addColumn('output_index', 'integer', (column) => column.notNull())
    .addPrimaryKeyConstraint('devnet_spends_pkey', ['chain_id', 'tx_hash', 'output_tx_hash', 'output_index'])
    .execute();
  await db.schema.createIndex('devnet_spends_output_idx').on('devnet_spends').columns(['chain_id', 'output_tx_hash', 'output_index']).execute();

  // per-account flags (XRPL's RequireDest)
  await db.schema
    .createTable('devnet_accounts')
    .addColumn('chain_id', 'text', (column) => column.notNull())
    .addColumn('address', 'text', (column) => column.notNull())
    .addColumn('requires_destination_tag', 'boolean', (column) => column.notNull().defaultTo(false))
    .addPrimaryKeyConstraint('devnet_accounts_pkey', ['chain_id', 'address'])
    .execute();
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  for (const table of ['devnet_accounts', 'devnet_spends', 'devnet_transfers', 'devnet_transactions', 'devnet_blocks', 'devnet_chains']) {
    await db.schema.dropTable(table).execute();
  }
  await sql`drop sequence devnet_transaction_seq`.execute(db);
};
