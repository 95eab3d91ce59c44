import type { MigrationSet } from '../../../db/migrate.js';
import * as sweepAttempts from './20261125T1700-sweep-attempts.js';

/** The sweepers' own tables: not read models (a rebuild never touches them). Frozen once landed: add, never edit. */
export const sweeperMigrations: MigrationSet = {
  schema: 'public',
  table: 'sweeper_migration',
  migrations: { '20261125T1700-sweep-attempts': sweepAttempts },
};
