import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
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

describe('PostgreSQL reads without metadata', () => {
  it('leave each event\'s metadata out, and keep everything else', async () => {
    const database = await createTestDatabase('eventstore_without_metadata');
    await migrateToLatest(database.pool, eventStoreMigrations);
    const store = createPostgresEventStore({ pool: database.pool, listenConfig: database.config, logger: createLogger('silent') });
    try {
      await store.append('lean-1', 'no_stream', [{ id: randomUUID(), type: 'Opened', data: { n: 1 }, metadata: { actor: 'test', at: '2026-11-27T14:00:00.000Z' } }]);
      const [whole] = (await store.readAllScanned()).events;
      const [lean] = (await store.readAllScanned({ metadata: false })).events;
      expect(lean).not.toHaveProperty('metadata');
      expect({ ...lean, metadata: whole!.metadata }).toEqual(whole);
    } finally {
      await store.close();
      await database.drop();
    }
  });
});
