import { createLogger } from '../../src/log.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createPostgresEventStore } from '../../src/eventstore/postgres/postgres-event-store.js';
import { eventStoreMigrations } from '../../src/eventstore/postgres/migrations/index.js';
import { createTestDatabase } from '../support/database.js';
import { describeEventStoreContract } from './eventstore.contract.js';

describeEventStoreContract('PostgreSQL', async () => {
  const database = await createTestDatabase('eventstore');
  await migrateToLatest(database.pool, eventStoreMigrations);
  const store = createPostgresEventStore({ pool: database.pool, listenConfig: database.config, logger: createLogger('silent') });
  return {
    store,
    teardown: async () => {
      await store.close();
      await database.drop();
    },
  };
});
