import { type Kysely } from 'kysely';

/**
 * Where each chain's deposit watcher has got to (src/chains/watcher). Not read models: no
 * projection owns them and a rebuild never empties them, since the chain cannot be replayed from
 * the event store.
 */
export const up = async (db: Kysely<unknown>): Promise<void> => {
  // one row per chain: the next block to scan
  await db.schema
    .createTable('chain_watcher_cursors')
    .addColumn('chain_id', 'text', (column) => column.notNull())
    .addColumn('next_block', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'timestamptz', (column) => column.notNull())
    .addPrimaryKeyConstraint('chain_watcher_cursors_pkey', ['chain_id'])
    .execute();

  // the hashes of the last scanned blocks (bounded): how far back a reorg forked
  await db.schema
    .createTable('chain_watcher_blocks')
    .addColumn('chain_id', 'text', (column) => column.notNull())
    .addColumn('number', 'bigint', (column) => column.notNull())
    .addColumn('hash', 'text', (column) => column.notNull())
    .addPrimaryKeyConstraint('chain_watcher_blocks_pkey', ['chain_id', 'number'])
    .execute();
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await db.schema.dropTable('chain_watcher_blocks').execute();
  await db.schema.dropTable('chain_watcher_cursors').execute();
};
