import type { MigrationSet } from '../../../db/migrate.js';
import * as eventStore from './20261122T0900-event-store.js';

export const eventStoreMigrations: MigrationSet = {
  schema: 'eventstore',
  migrations: { '20261122T0900-event-store': eventStore },
};
