import type { MigrationSet } from '../../../db/migrate.js';
import * as chainWatchers from './20261122T1900-chain-watchers.js';
import * as watcherCheckpoints from './20261126T0700-watcher-checkpoints.js';

/**
 * Where each chain's deposit watcher has got to: not read models (the chain cannot be replayed from
 * the event store). Frozen once landed: add, never edit. Its bookkeeping moved out of the read
 * models' set, where a database migrated before 2026-11-25 recorded it.
 */
export const chainWatcherMigrations: MigrationSet = {
  schema: 'public',
  table: 'chain_watcher_migration',
  movedFrom: { schema: 'public', table: 'kysely_migration' },
  migrations: { '20261122T1900-chain-watchers': chainWatchers, '20261126T0700-watcher-checkpoints': watcherCheckpoints },
};
