import type { MigrationSet } from '../../../db/migrate.js';
import * as processorCheckpoints from './20261126T0700-withdrawal-processor-checkpoints.js';

/** The withdrawal processors' own tables: not read models (a rebuild never touches them). Frozen once landed: add, never edit. */
export const withdrawalProcessorMigrations: MigrationSet = {
  schema: 'public',
  table: 'withdrawal_processor_migration',
  migrations: { '20261126T0700-withdrawal-processor-checkpoints': processorCheckpoints },
};
