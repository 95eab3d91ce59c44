import { sql, type Kysely } from 'kysely';

/**
 * What each chain's deposit watcher knows from the event store, kept at a position so a start reads
 * only the events after it: the position, the watched addresses (one row each, added as they are
 * handed out), the unconfirmed deposits and the EVM token deposits keyed the old way. Written by
 * the active watcher only, in one transaction per checkpoint.
 */
export const up = async (db: Kysely<unknown>): Promise<void> => {
  // one row per chain: the event-store position the rows below describe
  await db.schema
    .createTable('chain_watcher_checkpoints')
    .addColumn('chain_id', 'text', (column) => column.notNull())
    .addColumn('position', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'timestamptz', (column) => column.notNull())
    .addPrimaryKeyConstraint('chain_watcher_checkpoints_pkey', ['chain_id'])
    .execute();

  // the watch set: deposit accounts (an owner) and the organizations' own wallets (no owner)
  await db.schema
    .createTable('chain_watcher_addresses')
    .addColumn('chain_id', 'text', (column) => column.notNull())
    .addColumn('entry_key', 'text', (column) => column.notNull())
    .addColumn('kind', 'text', (column) => column.notNull())
    .addColumn('address', 'text', (column) => column.notNull())
    .addColumn('destination_tag', 'text')
    .addColumn('org_id', 'text')
    .addColumn('external_user_id', 'text')
    .addPrimaryKeyConstraint('chain_watcher_addresses_pkey', ['chain_id', 'kind', 'entry_key'])
    .addCheckConstraint('chain_watcher_addresses_kind_check', sql`kind in ('account', 'service')`)
    .execute();

  // detected deposits neither confirmed nor reverted yet (live state: rows leave as verdicts come)
  await db.schema
    .createTable('chain_watcher_unconfirmed')
    .addColumn('chain_id', 'text', (column) => column.notNull())
    .addColumn('tx_hash', 'text', (column) => column.notNull())
    .addColumn('output_index', 'integer', (column) => column.notNull())
    .addColumn('block_number', 'bigint', (column) => column.notNull())
    .addColumn('block_hash', 'text', (column) => column.notNull())
    .addPrimaryKeyConstraint('chain_watcher_unconfirmed_pkey', ['chain_id', 'tx_hash', 'output_index'])
    .execute();

  // EVM token deposits recorded under their log's index in the block (a closed set)
  await db.schema
    .createTable('chain_watcher_legacy_deposits')
    .addColumn('chain_id', 'text', (column) => column.notNull())
    .addColumn('tx_hash', 'text', (column) => column.notNull())
    .addColumn('log_index', 'integer', (column) => column.notNull())
    .addColumn('content', 'text', (column) => column.notNull())
    .addPrimaryKeyConstraint('chain_watcher_legacy_deposits_pkey', ['chain_id', 'tx_hash', 'log_index'])
    .execute();
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await db.schema.dropTable('chain_watcher_legacy_deposits').execute();
  await db.schema.dropTable('chain_watcher_unconfirmed').execute();
  await db.schema.dropTable('chain_watcher_addresses').execute();
  await db.schema.dropTable('chain_watcher_checkpoints').execute();
};
