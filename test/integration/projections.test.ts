import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { eventStoreMigrations } from '../../src/eventstore/postgres/migrations/index.js';
import { createPostgresEventStore } from '../../src/eventstore/postgres/postgres-event-store.js';
import type { EventStore } from '../../src/eventstore/port.js';
import { createLogger } from '../../src/log.js';
import { readCheckpoint, rebuildProjection } from '../../src/projections/checkpoint.js';
import { readModelMigrations } from '../../src/projections/migrations/index.js';
import type { Projection } from '../../src/projections/projection.js';
import { ProjectionRunner } from '../../src/projections/runner.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { newEvent, uniqueCategory } from '../support/events.js';
import { createTotalsTables, streamTotalsProjection, tableHash } from '../support/stream-totals-projection.js';

const logger = createLogger('silent');

describe('projection runner', () => {
  let database: TestDatabase;
  let store: EventStore;
  let db: Kysely<Database>;
  const runners: ProjectionRunner[] = [];

  const runner = (projection: Projection, batchSize = 100) => {
    const created = new ProjectionRunner({
      projection,
      store,
      database: database.config,
      logger,
      batchSize,
      standbyRetryMs: 20,
      failureDelayMs: () => 10,
    });
    runners.push(created);
    return created;
  };

  const setUp = async (options: Parameters<typeof streamTotalsProjection>[1] = {}) => {
    const category = uniqueCategory('p');
    const projection = streamTotalsProjection(category, options);
    await createTotalsTables(db, projection.tables as [string, string]);
    return { category, projection };
  };

  /** appends `count` events with amounts 1..count over `streams` streams, from 4 concurrent writers */
  const appendEvents = async (category: string, count: number, streams = 7) => {
    const writers = 4;
    await Promise.all(
      Array.from({ length: writers }, async (_, writer) => {
        for (let index = writer; index < count; index += writers) {
          await store.append(`${category}-${index % streams}`, 'any', [newEvent('Added', { index, amount: String(index + 1) })]);
        }
      }),
    );
  };

  const expectedTotals = (category: string, count: number, streams = 7) =>
    Array.from({ length: streams }, (_, stream) => {
      const indexes = Array.from({ length: count }, (_, index) => index).filter((index) => index % streams === stream);
      return { stream: `${category}-${stream}`, events: indexes.length, total: String(indexes.reduce((sum, index) => sum + index + 1, 0)) };
    });

  const totals = async (table: string) =>
    (await db.selectFrom(table as 'projection_checkpoints').selectAll().execute()) as unknown as { stream: string; events: number; total: string }[];

  const waitForCheckpoint = async (name: string, position: bigint) => {
    while ((await readCheckpoint(db, name)) < position) await new Promise((resolve) => setTimeout(resolve, 10));
  };

  beforeAll(async () => {
    database = await createTestDatabase('projections');
    await migrateToLatest(database.pool, eventStoreMigrations);
    await migrateToLatest(database.pool, readModelMigrations);
    store = createPostgresEventStore({ pool: database.pool, listenConfig: database.config, logger });
    db = createDatabase(database.pool);
  });
  afterAll(async () => {
    await Promise.all(runners.map((created) => created.stop()));
    await store.close();
    await database.drop(); // ends the pool that db runs on

  });

  it('follows live appends from concurrent writers and applies each event once', async () => {
    const { category, projection } = await setUp();
    const live = runner(projection);
    live.start();
    await appendEvents(category, 1000);
    await waitForCheckpoint(projection.name, await store.headPosition());
    const rows = await totals(projection.tables[0]!);
    expect(rows.sort((a, b) => a.stream.localeCompare(b.stream))).toEqual(expectedTotals(category, 1000));
    const applied = await db.selectFrom(projection.tables[1] as 'projection_checkpoints').select((eb) => eb.fn.countAll().as('count')).executeTakeFirst();
    expect(Number(applied?.count)).toBe(1000);
    await live.stop();
  });

  it('commits nothing of a batch whose handler throws, and converges once the cause is gone', async () => {
    let poisoned = true;
    const { category, projection } = await setUp({ failOn: (index) => poisoned && index === 150 });
    await appendEvents(category, 400);
    const failing = runner(projection, 100);
    failing.start();
    while (projection.poisonedIndex === null) await new Promise((resolve) => setTimeout(resolve, 5));
    await failing.stop();
    // batches run in position order; the batch holding event 150 failed, so nothing at or after it is applied
    const checkpoint = await readCheckpoint(db, projection.name);
    const events = await store.readAll({ filter: { categories: [category] }, maxCount: 1000 });
    const poisonedEvent = events.find((event) => event.data.index === 150)!;
    expect(checkpoint < poisonedEvent.position).toBe(true);
    const applied = await db.selectFrom(projection.tables[1] as 'projection_checkpoints').select((eb) => eb.fn.countAll().as('count')).executeTakeFirst();
    expect(Number(applied?.count)).toBe(events.filter((event) => event.position <= checkpoint).length);
    expect(Number(applied?.count) % 100).toBe(0); // whole batches only

    poisoned = false;
    const rerun = runner(projection, 100);
    rerun.start();
    await waitForCheckpoint(projection.name, events[events.length - 1]!.position);
    const rows = await totals(projection.tables[0]!);
    expect(rows.sort((a, b) => a.stream.localeCompare(b.stream))).toEqual(expectedTotals(category, 400));
    await rerun.stop();
  });

  it('lets one runner be active per projection; a standby takes over with no gap and no repeat', async () => {
    const { category, projection } = await setUp();
    const first = runner(projection, 50);
    const second = runner(projection, 50);
    first.start();
    await appendEvents(category, 200);
    await waitForCheckpoint(projection.name, await store.headPosition());
    second.start();
    while (second.state !== 'standby') await new Promise((resolve) => setTimeout(resolve, 5));
    expect(first.state).toBe('running');
    await first.stop();
    const more = Array.from({ length: 100 }, (_, offset) => offset + 200);
    for (const index of more) await store.append(`${category}-${index % 7}`, 'any', [newEvent('Added', { index, amount: String(index + 1) })]);
    await waitForCheckpoint(projection.name, await store.headPosition());
    expect(second.state).toBe('running');
    const rows = await totals(projection.tables[0]!);
    expect(rows.sort((a, b) => a.stream.localeCompare(b.stream))).toEqual(expectedTotals(category, 300));
    await second.stop();
  });

  it('rebuilds from position 0 into tables identical to the live ones, while readers always see whole tables', async () => {
    const { category, projection } = await setUp();
    const live = runner(projection, 64);
    live.start();
    await appendEvents(category, 700, 11);
    await waitForCheckpoint(projection.name, await store.headPosition());
    const liveHashes = await Promise.all(projection.tables.map((table) => tableHash(db, table)));
    const liveTotals = await totals(projection.tables[0]!);

    // while the live runner is active and readers read: each read sees the whole table, old or rebuilt
    let rebuilding = true;
    const reads: number[] = [];
    const reader = (async () => {
      while (rebuilding) reads.push((await totals(projection.tables[0]!)).length);
    })();
    const rebuiltAt = await rebuildProjection(db, store, projection);
    rebuilding = false;
    await reader;
    expect(rebuiltAt).toBe(await store.headPosition());
    expect(reads.length).toBeGreaterThan(0);
    expect(new Set(reads)).toEqual(new Set([liveTotals.length]));
    expect(await Promise.all(projection.tables.map((table) => tableHash(db, table)))).toEqual(liveHashes);

    // the live runner goes on from the rebuilt checkpoint: later events are applied once
    await appendEvents(category, 140, 11);
    await waitForCheckpoint(projection.name, await store.headPosition());
    const afterHashes = await Promise.all(projection.tables.map((table) => tableHash(db, table)));
    await live.stop();

    // and with no runner (the CLI path): the same tables again
    await rebuildProjection(db, store, projection);
    expect(await Promise.all(projection.tables.map((table) => tableHash(db, table)))).toEqual(afterHashes);
    expect((await totals(projection.tables[0]!)).reduce((sum, row) => sum + Number(row.events), 0)).toBe(840);
  });

  it('survives its session dying mid-batch: nothing partial, then it converges', async () => {
    const { category, projection } = await setUp();
    await appendEvents(category, 300);
    const victim = runner(projection, 100);
    victim.start();
    await waitForCheckpoint(projection.name, 1n);
    await database.pool.query(`select pg_terminate_backend(pid) from pg_stat_activity where application_name like $1`, [
      `%projection:${projection.name}`,
    ]);
    await waitForCheckpoint(projection.name, await store.headPosition());
    const rows = await totals(projection.tables[0]!);
    expect(rows.sort((a, b) => a.stream.localeCompare(b.stream))).toEqual(expectedTotals(category, 300));
    await victim.stop();
  });
});

describe('projection runner shutdown', () => {
  it('stops promptly when stopped at any moment after start, even before it subscribed', async () => {
    const database = await createTestDatabase('runner_stop');
    await migrateToLatest(database.pool, eventStoreMigrations);
    await migrateToLatest(database.pool, readModelMigrations);
    const store = createPostgresEventStore({ pool: database.pool, listenConfig: database.config, logger });
    const projection = streamTotalsProjection(uniqueCategory('s'));
    for (const delayMs of [0, 1, 5, 20, 50]) {
      const runner = new ProjectionRunner({ projection, store, database: database.config, logger });
      runner.start();
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      const stopped = await Promise.race([runner.stop().then(() => 'stopped'), new Promise((resolve) => setTimeout(() => resolve('hung'), 10_000))]);
      expect(stopped, `stop after ${delayMs} ms`).toBe('stopped');
    }
    await store.close();
    await database.drop();
  });
});
