import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { eventStoreMigrations } from '../../src/eventstore/postgres/migrations/index.js';
import { createPostgresEventStore } from '../../src/eventstore/postgres/postgres-event-store.js';
import type { EventStore, RecordedEvent } from '../../src/eventstore/port.js';
import { createLogger } from '../../src/log.js';
import { readCheckpoint } from '../../src/projections/checkpoint.js';
import { projectionApplyDuration, projectionBatchSize, projectionEventDelay } from '../../src/observability/metrics.js';
import { readModelMigrations } from '../../src/projections/migrations/index.js';
import type { Projection } from '../../src/projections/projection.js';
import { ProjectionRunner } from '../../src/projections/runner.js';
import { SharedProjectionReads } from '../../src/projections/shared-reads.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { newEvent, uniqueCategory } from '../support/events.js';
import { createTotalsTables, streamTotalsProjection } from '../support/stream-totals-projection.js';

const logger = createLogger('silent');

/** the store, counting the subscriptions it opens and the reads made outside them */
const counting = (store: EventStore) => {
  const counts = { subscriptions: 0, reads: 0 };
  const counted: EventStore = {
    ...store,
    subscribeToAll: (options) => {
      counts.subscriptions++;
      return store.subscribeToAll(options);
    },
    readAllScanned: (options) => {
      counts.reads++;
      return store.readAllScanned(options);
    },
  };
  return { counted, counts };
};

describe('one read of the store for every projection runner', () => {
  let database: TestDatabase;
  let store: EventStore;
  let db: Kysely<Database>;
  const runners: ProjectionRunner[] = [];

  beforeAll(async () => {
    database = await createTestDatabase('projection_shared_reads');
    await migrateToLatest(database.pool, eventStoreMigrations);
    await migrateToLatest(database.pool, readModelMigrations);
    store = createPostgresEventStore({ pool: database.pool, listenConfig: database.config, logger });
    db = createDatabase(database.pool);
  });
  afterAll(async () => {
    await Promise.all(runners.map((runner) => runner.stop()));
    await store.close();
    await database.drop();
  });

  const runner = (projection: Projection, reads: SharedProjectionReads, on: EventStore = store) => {
    const created = new ProjectionRunner({ projection, store: on, reads, database: database.config, logger, batchSize: 10, failureDelayMs: () => 10 });
    runners.push(created);
    return created;
  };

  const totalsProjection = async (options: Parameters<typeof streamTotalsProjection>[1] = {}) => {
    const category = uniqueCategory('s');
    const projection = streamTotalsProjection(category, options);
    await createTotalsTables(db, projection.tables as [string, string]);
    return { category, projection };
  };

  /** appends `count` events (amounts 1..count) to three streams of `category`; answers the last position */
  const append = async (category: string, count: number, from = 0): Promise<bigint> => {
    let position = 0n;
    for (let index = from; index < from + count; index++) {
      ({ position } = await store.append(`${category}-${index % 3}`, 'any', [newEvent('Added', { index, amount: String(index + 1) })]));
    }
    return position;
  };

  const reached = async (name: string, position: bigint) => {
    while ((await readCheckpoint(db, name)) < position) await new Promise((resolve) => setTimeout(resolve, 5));
  };

  /** every event of `category` applied exactly once: one applied row per event, totals that add up */
  const appliedOnce = async (category: string, projection: Projection) => {
    const events = await store.readAll({ filter: { categories: [category] }, maxCount: 10_000 });
    const applied = await db.selectFrom(projection.tables[1] as 'projection_checkpoints').selectAll().execute();
    expect((applied as unknown as { position: string }[]).map((row) => BigInt(row.position)).sort((a, b) => (a < b ? -1 : 1))).toEqual(events.map((event) => event.position));
    const totals = (await db.selectFrom(projection.tables[0] as 'projection_checkpoints').selectAll().execute()) as unknown as { events: number; total: string }[];
    expect(totals.reduce((sum, row) => sum + row.events, 0)).toBe(events.length);
    expect(totals.reduce((sum, row) => sum + BigInt(row.total), 0n)).toBe(events.reduce((sum, event) => sum + BigInt(String(event.data.amount)), 0n));
  };

  it('reads each append once for every runner that follows it live, and each applies its own events once', async () => {
    const subjects = await Promise.all(Array.from({ length: 4 }, () => totalsProjection()));
    const { counted, counts } = counting(store);
    const reads = new SharedProjectionReads(counted, subjects.map(({ projection }) => projection.filter), { batchSize: 10 });
    // a history to catch up on first (each reads it on its own), then live appends
    for (const { category } of subjects) await append(category, 25);
    for (const { projection } of subjects) runner(projection, reads, counted).start();
    for (const { category, projection } of subjects) await reached(projection.name, (await store.readAll({ filter: { categories: [category] }, maxCount: 10_000 })).at(-1)!.position);
    // each caught up on its own, and joined the shared read when a read of its own came back cut short
    expect(counts.subscriptions).toBe(1);
    const readsCaughtUp = counts.reads;
    expect(readsCaughtUp).toBe(reads.ownReads);
    for (let round = 0; round < 5; round++) {
      for (const { category, projection } of subjects) await reached(projection.name, await append(category, 3, 25 + round * 3));
    }
    // all four joined the one shared read: no read of their own since, one subscription for them all
    expect(counts.reads).toBe(readsCaughtUp);
    expect(counts.subscriptions).toBe(1);
    expect(reads.feedsStarted).toBe(1);
    for (const { category, projection } of subjects) await appliedOnce(category, projection);
  });

  it("records each batch a runner applies: its events, its apply's time and how long after its last event was recorded", async () => {
    const { category, projection } = await totalsProjection();
    const ofProjection = async (histogram: typeof projectionBatchSize, suffix: string) =>
      (await histogram.get()).values.find((value) => value.labels.projection === projection.name && value.metricName?.endsWith(suffix))?.value ?? 0;
    const reads = new SharedProjectionReads(store, [projection.filter], { batchSize: 10 });
    runner(projection, reads).start();
    await reached(projection.name, await append(category, 7));
    await reached(projection.name, await append(category, 5, 7));
    // every event counted once, in as many batches as were applied (at least one per wave)
    expect(await ofProjection(projectionBatchSize, '_sum')).toBe(12);
    const batches = await ofProjection(projectionBatchSize, '_count');
    expect(batches).toBeGreaterThanOrEqual(2);
    expect(await ofProjection(projectionApplyDuration, '_count')).toBe(batches);
    expect(await ofProjection(projectionEventDelay, '_count')).toBe(batches);
    expect(await ofProjection(projectionApplyDuration, '_sum')).toBeGreaterThan(0);
  });

  it('a projection that falls behind holds no other back, then catches up on its own and applies each event once', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow = await totalsProjection();
    const fast = await totalsProjection();
    const blocked: Projection = {
      ...slow.projection,
      handle: async (trx, event) => {
        await held;
        await slow.projection.handle(trx, event);
      },
    };
    const reads = new SharedProjectionReads(store, [slow.projection.filter, fast.projection.filter], { batchSize: 10, maxQueued: 20 });
    runner(blocked, reads).start();
    runner(fast.projection, reads).start();
    await reached(fast.projection.name, await append(fast.category, 1));
    await append(slow.category, 1); // the slow one's first batch: it holds there
    // far more than the slow one may have queued, interleaved with the fast one's
    let fastHead = 0n;
    for (let round = 0; round < 10; round++) {
      await append(slow.category, 10, 1 + round * 10);
      fastHead = await append(fast.category, 5, 1 + round * 5);
    }
    await reached(fast.projection.name, fastHead);
    expect(await readCheckpoint(db, slow.projection.name)).toBe(0n);
    release();
    await reached(slow.projection.name, (await store.readAll({ filter: { categories: [slow.category] }, maxCount: 10_000 })).at(-1)!.position);
    expect(reads.ownReads).toBeGreaterThan(2); // it left the shared read and read on its own
    await appliedOnce(slow.category, slow.projection);
    await appliedOnce(fast.category, fast.projection);
    // back at the head, it follows live again
    await reached(slow.projection.name, await append(slow.category, 3, 101));
    await appliedOnce(slow.category, slow.projection);
  });

  it('a runner applies in one batch every event handed to it while it applied the last one', async () => {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow = await totalsProjection();
    const fast = await totalsProjection();
    const sizes: number[] = [];
    const recorded: Projection = {
      ...slow.projection,
      handleBatch: async (trx, events) => {
        sizes.push(events.length);
        await held;
        for (const event of events) await slow.projection.handle(trx, event);
      },
    };
    const reads = new SharedProjectionReads(store, [slow.projection.filter, fast.projection.filter], { batchSize: 10 });
    runner(recorded, reads).start();
    runner(fast.projection, reads).start();
    await reached(fast.projection.name, await append(fast.category, 1));
    await append(slow.category, 1); // its first batch, held while it is applied
    while (sizes.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    // five more, one append at a time; the fast runner at the last one means all were handed (one hand-off for both)
    for (let index = 1; index < 6; index++) {
      await append(slow.category, 1, index);
      await reached(fast.projection.name, await append(fast.category, 1, index));
    }
    release();
    await reached(slow.projection.name, (await store.readAll({ filter: { categories: [slow.category] }, maxCount: 100 })).at(-1)!.position);
    expect(sizes).toEqual([1, 5]);
    await appliedOnce(slow.category, slow.projection);
  });

  it('a batch that fails in one projection commits nothing of it there, and nothing of it is lost or doubled in either', async () => {
    let poisoned = true;
    const failing = await totalsProjection({ failOn: (index) => poisoned && index === 7 });
    const healthy = await totalsProjection();
    const reads = new SharedProjectionReads(store, [failing.projection.filter, healthy.projection.filter], { batchSize: 10 });
    runner(failing.projection, reads).start();
    runner(healthy.projection, reads).start();
    await reached(healthy.projection.name, await append(healthy.category, 1));
    await reached(failing.projection.name, await append(failing.category, 5));
    // the shared read hands both their events; the failing one's batch holding event 7 rolls back, again and again
    for (let index = 5; index < 12; index++) {
      await append(failing.category, 1, index);
      await append(healthy.category, 1, index);
    }
    const healthyHead = (await store.readAll({ filter: { categories: [healthy.category] }, maxCount: 100 })).at(-1)!.position;
    await reached(healthy.projection.name, healthyHead);
    while (failing.projection.poisonedIndex === null) await new Promise((resolve) => setTimeout(resolve, 5));
    const events = await store.readAll({ filter: { categories: [failing.category] }, maxCount: 100 });
    const poisonedAt = events.find((event) => event.data.index === 7)!.position;
    expect(await readCheckpoint(db, failing.projection.name)).toBeLessThan(poisonedAt);
    await appliedOnce(healthy.category, healthy.projection);
    poisoned = false;
    await reached(failing.projection.name, events.at(-1)!.position);
    await appliedOnce(failing.category, failing.projection);
  });

  it('a follower that joins a shared read already past it reads the events in between first, in order, none twice', async () => {
    const [ahead, joining] = [uniqueCategory('a'), uniqueCategory('j')];
    let holdRead: Promise<void> | null = null;
    let releaseRead: () => void = () => undefined;
    const gated: EventStore = {
      ...store,
      readAllScanned: async (options) => {
        const read = await store.readAllScanned(options);
        // the joining follower's first read returns only after the shared read went past its snapshot
        if (holdRead && options?.filter?.categories?.[0] === joining) {
          const waiting = holdRead;
          holdRead = null;
          await waiting;
        }
        return read;
      },
    };
    const reads = new SharedProjectionReads(gated, [{ categories: [ahead] }, { categories: [joining] }], { batchSize: 10 });
    const start = await store.headPosition();
    const first = reads.follow({ afterPosition: start, filter: { categories: [ahead] }, maxBatchSize: 10 });
    const firstBatches = first[Symbol.asyncIterator]();
    await append(ahead, 1);
    expect((await firstBatches.next()).value).toHaveLength(1); // it joined the shared read

    holdRead = new Promise<void>((resolve) => (releaseRead = resolve));
    const second = reads.follow({ afterPosition: start, filter: { categories: [joining] }, maxBatchSize: 10 });
    const secondBatches = second[Symbol.asyncIterator]();
    const firstOfSecond = secondBatches.next();
    while (holdRead !== null) await new Promise((resolve) => setTimeout(resolve, 5));
    // while its read is held: events of both categories, which the shared read hands the first follower
    await append(joining, 4);
    const aheadLast = await append(ahead, 2, 1);
    const seenByFirst: RecordedEvent[] = [];
    while (seenByFirst.at(-1)?.position !== aheadLast) seenByFirst.push(...((await firstBatches.next()).value as RecordedEvent[]));
    releaseRead();
    const seen: RecordedEvent[] = [...(((await firstOfSecond).value as RecordedEvent[] | undefined) ?? [])];
    await append(joining, 2, 4);
    while (seen.length < 6) seen.push(...((await secondBatches.next()).value as RecordedEvent[]));
    const expected = await store.readAll({ afterPosition: start, filter: { categories: [joining] }, maxCount: 100 });
    expect(seen.map((event) => event.position)).toEqual(expected.map((event) => event.position));
    expect(reads.feedsStarted).toBe(1);
    await first.close();
    await second.close();
    expect(await firstBatches.next()).toEqual({ value: undefined, done: true });
  });
});
