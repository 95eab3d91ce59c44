import { type Kysely } from 'kysely';

/**
 * What each chain's withdrawal processor knows from the event store, kept at a position so a start
 * reads only the events after it: the withdrawals that became Pending on the chain and are not
 * known to be finished (live state: a row leaves once its withdrawal is). Written by the active
 * processor only, in one transaction per checkpoint.
 */
export const up = async (db: Kysely<unknown>): Promise<void> => {
  // one row per chain: the event-store position the open list describes
  await db.schema
    .createTable('withdrawal_processor_checkpoints')
    .addColumn('chain_id', 'text', (column) => column.notNull())
    .addColumn('position', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'timestamptz', (column) => column.notNull())
    .addPrimaryKeyConstraint('withdrawal_processor_checkpoints_pkey', ['chain_id'])
    .execute();

  // the open list; `ready_position` (the event that made it Pending) keeps the order they are taken in
  await db.schema
    .createTable('withdrawal_processor_open')
    .addColumn('chain_id', 'text', (column) => column.notNull())
    .addColumn('withdrawal_id', 'text', (column) => column.notNull())
    .addColumn('org_id', 'text', (column) => column.notNull())
    .addColumn('ready_position', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('withdrawal_processor_open_pkey', ['chain_id', 'withdrawal_id'])
    .execute();
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await db.schema.dropTable('withdrawal_processor_open').execute();
  await db.schema.dropTable('withdrawal_processor_checkpoints').execute();
};
