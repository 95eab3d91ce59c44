import type { MigrationSet } from '../../../db/migrate.js';
import * as devnet from './20261122T1300-devnet.js';
import * as runningTotals from './20261126T1700-devnet-running-totals.js';

/**
 * The devnet's chain state: tables no projection owns, kept like a node's data directory. Frozen
 * once landed: add, never edit. Its bookkeeping moved out of the read models' set, where a
 * database migrated before 2026-11-25 recorded it.
 */
export const devnetMigrations: MigrationSet = {
  schema: 'public',
  table: 'devnet_migration',
  movedFrom: { schema: 'public', table: 'kysely_migration' },
  migrations: { '20261122T1300-devnet': devnet, '20261126T1700-devnet-running-totals': runningTotals },
};
