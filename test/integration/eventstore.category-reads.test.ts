import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { eventStoreMigrations } from '../../src/eventstore/postgres/migrations/index.js';
import { createPostgresEventStore } from '../../src/eventstore/postgres/postgres-event-store.js';
import type { EventStore, RecordedEvent } from '../../src/eventstore/port.js';
import { createLogger } from '../../src/log.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { newEvent, newEvents, uniqueCategory } from '../support/events.js';

/**
 * What a read of one quiet category costs when other categories fill the log after it: the pages
 * its statement touches, from PostgreSQL's own account of the statement the store sent (EXPLAIN
 * ANALYZE of the same text and parameters), not a clock.
 */
describe('reads of one category (PostgreSQL)', () => {
  let database: TestDatabase;
  let store: EventStore;
  let reader: EventStore;
  const sent: { text: string; params: unknown[] }[] = [];

  beforeAll(async () => {
    database = await createTestDatabase('category_reads');
    await migrateToLatest(database.pool, eventStoreMigrations);
    store = createPostgresEventStore({ pool: database.pool, listenConfig: database.config, logger: createLogger('silent') });
    // the same store reading through a pool that remembers each statement it sends
    const recording = new Proxy(database.pool, {
      get: (target, key) =>
        key === 'query'
          ? (text: string, params: unknown[]) => {
              sent.push({ text, params });
              return target.query(text, params);
            }
          : Reflect.get(target, key, target),
    });
    reader = createPostgresEventStore({ pool: recording, listenConfig: database.config, logger: createLogger('silent') });
  });
  afterAll(async () => {
    await reader.close();
    await store.close();
    await database.drop();
  });

  /** the shared pages PostgreSQL touched running the statement the store sent last */
  const pagesOfLastRead = async (): Promise<number> => {
    const { text, params } = sent.at(-1)!;
    const result = await database.pool.query<{ 'QUERY PLAN': [{ Plan: { 'Shared Hit Blocks': number; 'Shared Read Blocks': number } }] }>(`explain (analyze, buffers, format json) ${text}`, params);
    const { Plan: plan } = result.rows[0]!['QUERY PLAN'][0];
    return plan['Shared Hit Blocks'] + plan['Shared Read Blocks'];
  };

  it('starts at its position and stops where its category ends: neither its own 22,000 earlier events nor 20,000 later ones of another category cost it a page', async () => {
    // the category read sorts between two busy ones: the (category, position) index holds 22,000 of
    // its own entries before its position and 20,000 of another category after its last entry
    const read = uniqueCategory('m');
    const after = uniqueCategory('z');
    for (let batch = 0; batch < 20; batch++) await store.append(`${read}-${batch}`, 'no_stream', newEvents(1000, 'Earlier'));
    for (let batch = 0; batch < 2; batch++) await store.append(`${read}-sparse-${batch}`, 'no_stream', newEvents(1000, 'Sparse'));
    const { position: last } = await store.append(`${read}-quiet`, 'no_stream', [newEvent('Quiet')]);
    for (let batch = 0; batch < 20; batch++) await store.append(`${after}-${batch}`, 'no_stream', newEvents(1000, 'Later'));
    await database.pool.query('analyze eventstore.events');

    const readAfter = async (afterPosition: bigint, types?: string[]): Promise<RecordedEvent[]> =>
      reader.readAll({ afterPosition, maxCount: 500, filter: { categories: [read], ...(types ? { types } : {}) } });
    expect(await readAfter(last)).toEqual([]);
    expect(await pagesOfLastRead()).toBeLessThan(10);
    expect(await readAfter(last, ['Quiet'])).toEqual([]);
    expect(await pagesOfLastRead()).toBeLessThan(10);
    // a type its category holds 2,000 of before the position (few in the log, many in the category): no walk of them either
    expect(await readAfter(last, ['Sparse', 'Quiet'])).toEqual([]);
    expect(await pagesOfLastRead()).toBeLessThan(10);
    expect((await readAfter(last - 1n)).map((event) => event.position)).toEqual([last]);
    const quiet = uniqueCategory('a'); // sorts before both
    const { position: quietLast } = await store.append(`${quiet}-1`, 'no_stream', [newEvent('Quiet')]);
    expect(await reader.readAll({ afterPosition: quietLast, maxCount: 500, filter: { categories: [quiet] } })).toEqual([]);
    expect(await pagesOfLastRead()).toBeLessThan(10);

    // the subscription's read (with the store's head) costs the same
    const subscription = reader.subscribeToAll({ afterPosition: last - 1n, filter: { categories: [read] } });
    const iterator = subscription[Symbol.asyncIterator]();
    try {
      expect(((await iterator.next()).value as RecordedEvent[]).map((event) => event.position)).toEqual([last]);
      expect(sent.at(-1)!.text).toContain('left join lateral');
      expect(await pagesOfLastRead()).toBeLessThan(10);
    } finally {
      await subscription.close();
    }
  });
  it('a read cut short answers the head of its own snapshot, past the events its filter skipped', async () => {
    const [quiet, busy] = [uniqueCategory('q'), uniqueCategory('b')];
    const before = await store.headPosition();
    const { position: quietAt } = await store.append(`${quiet}-1`, 'no_stream', [newEvent('Quiet')]);
    const { position: head } = await store.append(`${busy}-1`, 'no_stream', newEvents(5, 'Busy'));
    const cutShort = await reader.readAllScanned({ afterPosition: before, maxCount: 10, filter: { categories: [quiet] } });
    expect(cutShort.events.map((event) => event.position)).toEqual([quietAt]);
    expect(cutShort.scannedTo).toBe(head);
    expect(sent.at(-1)!.text).toContain('left join lateral'); // one statement: the head in the read's snapshot
    const empty = await reader.readAllScanned({ afterPosition: quietAt, maxCount: 10, filter: { categories: [quiet] } });
    expect(empty).toEqual({ events: [], scannedTo: head });
    // a full read stops at its last event, whatever follows
    const full = await reader.readAllScanned({ afterPosition: before, maxCount: 1, filter: { categories: [quiet, busy] } });
    expect(full.scannedTo).toBe(quietAt);
  });
});
