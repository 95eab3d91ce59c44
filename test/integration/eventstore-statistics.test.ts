import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import type { EventStore } from '../../src/eventstore/port.js';
import { eventStoreMigrations } from '../../src/eventstore/postgres/migrations/index.js';
import { createPostgresEventStore } from '../../src/eventstore/postgres/postgres-event-store.js';
import { analyzeEventsWithoutStatistics } from '../../src/eventstore/postgres/statistics.js';
import { createLogger } from '../../src/log.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { newEvents, uniqueCategory } from '../support/events.js';

describe('event store: statistics of the events table (real PostgreSQL)', () => {
  let database: TestDatabase;
  let store: EventStore;
  const estimatedRows = async () =>
    Number((await database.pool.query<{ rows: number }>(`select reltuples::float8 as rows from pg_class where oid = 'eventstore.events'::regclass`)).rows[0]!.rows);

  beforeAll(async () => {
    database = await createTestDatabase('events_statistics');
    await migrateToLatest(database.pool, eventStoreMigrations);
    store = createPostgresEventStore({ pool: database.pool, listenConfig: database.config, logger: createLogger('silent') });
  });
  afterAll(async () => {
    await store.close();
    await database.drop();
  });

  it('analyses a table PostgreSQL never gathered statistics of (as a restored or young store) once it holds many events, and only then', async () => {
    for (let stream = 0; stream < 20; stream++) await store.append(`${uniqueCategory('stats')}-${stream}`, 'no_stream', newEvents(10));
    expect(await estimatedRows()).toBeLessThan(0); // never analysed: the planner assumes a few pages
    // small: left alone, so that plans made now do not take it for empty
    expect(await analyzeEventsWithoutStatistics(database.pool, 201)).toBe(false);
    expect(await estimatedRows()).toBeLessThan(0);
    expect(await analyzeEventsWithoutStatistics(database.pool, 200)).toBe(true);
    expect(await estimatedRows()).toBe(200);
    expect(await analyzeEventsWithoutStatistics(database.pool, 200)).toBe(false);
  });
});
