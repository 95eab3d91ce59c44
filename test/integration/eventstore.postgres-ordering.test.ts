import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { eventStoreMigrations } from '../../src/eventstore/postgres/migrations/index.js';
import { createPostgresEventStore } from '../../src/eventstore/postgres/postgres-event-store.js';
import type { EventStore } from '../../src/eventstore/port.js';
import { createLogger } from '../../src/log.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { newEvent, newEvents, uniqueCategory } from '../support/events.js';

const APPEND_LOCK = '7370126172797466625';

const waitUntil = async (check: () => Promise<boolean>) => {
  for (;;) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

/** How the PostgreSQL adapter keeps its guarantees, shown step by step (not only statistically). */
describe('PostgreSQL event store: ordering and crashes', () => {
  let database: TestDatabase;
  let store: EventStore;
  let session: pg.Client;
  const waitingAppenders = async () => {
    const { rows } = await database.pool.query<{ pid: number }>(
      `select pid from pg_locks where locktype = 'advisory' and not granted and database = (select oid from pg_database where datname = current_database())`,
    );
    return rows.map((row) => row.pid);
  };

  beforeAll(async () => {
    database = await createTestDatabase('ordering');
    await migrateToLatest(database.pool, eventStoreMigrations);
    store = createPostgresEventStore({ pool: database.pool, listenConfig: database.config, logger: createLogger('silent') });
    session = new pg.Client(database.config);
    await session.connect();
  });
  afterAll(async () => {
    await session.end();
    await store.close();
    await database.drop();
  });

  it('never lets a reader see a later position while an earlier append is still open', async () => {
    const category = uniqueCategory();
    const head = await store.headPosition();
    await session.query('begin');
    const open = await session.query<{ result: { position: string } }>('select eventstore.append($1::jsonb) as result', [
      JSON.stringify([{ stream: `${category}-open`, category, expected: 'no_stream', events: [newEvent('Open')] }]),
    ]);
    const openPosition = BigInt(open.rows[0]!.result.position);

    const later = store.append(`${category}-later`, 'no_stream', [newEvent('Later')]);
    await waitUntil(async () => (await waitingAppenders()).length === 1); // queued behind the open append
    expect(await store.readAll({ afterPosition: head })).toEqual([]);

    await session.query('commit');
    const { position: laterPosition } = await later;
    expect(laterPosition > openPosition).toBe(true);
    const seen = await store.readAll({ afterPosition: head, filter: { categories: [category] } });
    expect(seen.map((event) => [event.type, event.position])).toEqual([
      ['Open', openPosition],
      ['Later', laterPosition],
    ]);
  });

  it('writes nothing to any stream when the appending session dies between its steps', async () => {
    const category = uniqueCategory();
    const [a, b] = [`${category}-a`, `${category}-b`];
    await store.append(a, 'no_stream', newEvents(2));
    await session.query('select pg_advisory_lock($1::bigint)', [APPEND_LOCK]); // hold appends after their stream checks
    const doomed = store.appendMany([
      { stream: a, expectedRevision: 1n, events: newEvents(3) },
      { stream: b, expectedRevision: 'no_stream', events: newEvents(2) },
    ]);
    const outcome = doomed.then(
      () => 'written',
      () => 'failed',
    );
    await waitUntil(async () => (await waitingAppenders()).length === 1);
    const [pid] = await waitingAppenders();
    await session.query('select pg_terminate_backend($1)', [pid]); // the crash: stream rows updated, events not yet written
    await session.query('select pg_advisory_unlock($1::bigint)', [APPEND_LOCK]);
    expect(await outcome).toBe('failed');
    expect(await store.readStream(a)).toHaveLength(2);
    expect(await store.streamRevision(a)).toBe(1n);
    expect(await store.readStream(b)).toEqual([]);
    expect(await store.streamRevision(b)).toBeNull();
    // nothing is left locked: the same decision, retried, goes through
    const retried = await store.appendMany([
      { stream: a, expectedRevision: 1n, events: newEvents(3) },
      { stream: b, expectedRevision: 'no_stream', events: newEvents(2) },
    ]);
    expect(retried.streams).toEqual([
      { stream: a, revision: 4n },
      { stream: b, revision: 1n },
    ]);
  });
});
