import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { eventStoreMigrations } from '../../src/eventstore/postgres/migrations/index.js';
import { AppendNotifications } from '../../src/eventstore/postgres/notifications.js';
import { createPostgresEventStore } from '../../src/eventstore/postgres/postgres-event-store.js';
import type { EventStore, RecordedEvent } from '../../src/eventstore/port.js';
import { createLogger } from '../../src/log.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { newEvent, uniqueCategory } from '../support/events.js';
import { waitUntil } from '../support/webhook-receiver.js';

/** far beyond the test's time-out: a wait that does not return at once fails the test */
const FOREVER_MS = 3_600_000;

describe('append notifications', () => {
  let database: TestDatabase;
  let store: EventStore;
  let notifications: AppendNotifications;

  beforeAll(async () => {
    database = await createTestDatabase('append_notifications');
    await migrateToLatest(database.pool, eventStoreMigrations);
    store = createPostgresEventStore({ pool: database.pool, listenConfig: database.config, logger: createLogger('silent') });
    notifications = new AppendNotifications(database.config, createLogger('silent'));
  });
  afterAll(async () => {
    await notifications.close();
    await store.close();
    await database.drop();
  });

  it('does not sleep through a notification that arrived while its reader was reading', async () => {
    const category = uniqueCategory('n');
    // a reader takes the count, then reads; meanwhile an append is notified
    const seenBeforeRead = notifications.count;
    void notifications.wait(10); // the LISTEN session starts with the first wait
    await waitUntil(
      async () => {
        await store.append(`${category}-1`, 'any', [newEvent('Added', { amount: '1' })]);
        return notifications.count > seenBeforeRead;
      },
      20_000,
      'an append notification',
    );
    // the reader found nothing new and waits: the notification it did not see wakes it at once
    await notifications.wait(FOREVER_MS, seenBeforeRead);
    expect(notifications.count).toBeGreaterThan(seenBeforeRead);
  });

  it('wakes a reader only for an append its read did not cover, and at once for one that arrived meanwhile', async () => {
    const notify = (payload: string) => database.pool.query('select pg_notify($1, $2)', ['eventstore_appended', payload]);
    void notifications.wait(10); // the LISTEN session starts with the first wait
    await waitUntil(
      async () => {
        const before = notifications.count;
        await notify('0');
        await new Promise((resolve) => setTimeout(resolve, 20));
        return notifications.count > before;
      },
      20_000,
      'the LISTEN session',
    );
    // a read that covered everything up to 1000 waits; appends at or below it (committed before
    // its snapshot, or in categories it skips) do not wake it
    const scannedTo = 1000n;
    let woken = false;
    const waiting = notifications.wait(FOREVER_MS, { count: notifications.count, scannedTo }).then(() => (woken = true));
    const before = notifications.count;
    for (const position of ['990', '1000', '7']) await notify(position);
    await waitUntil(async () => notifications.count >= before + 3, 20_000, 'three notifications');
    expect(woken).toBe(false);
    // one beyond it wakes it
    await notify('1001');
    await waiting;
    expect(woken).toBe(true);

    // a notification beyond the read's head that arrived while it read: the next wait returns at once
    const count = notifications.count;
    await notify('1500');
    await waitUntil(async () => notifications.count > count, 20_000, 'a notification during the read');
    await notifications.wait(FOREVER_MS, { count, scannedTo: 1400n });
    // one that named no position (the session started again) wakes every reader, whatever it covered
    const unnamed = notifications.count;
    (notifications as unknown as { notified: (payload?: string) => void }).notified();
    await notifications.wait(FOREVER_MS, { count: unnamed, scannedTo: 5000n });
  });

  it('a subscription delivers each event appended while it reads, once and in order', async () => {
    const category = uniqueCategory('s');
    const subscription = store.subscribeToAll({ afterPosition: await store.headPosition(), filter: { categories: [category] } });
    const iterator = subscription[Symbol.asyncIterator]();
    try {
      for (let index = 0; index < 20; index++) {
        const appended = store.append(`${category}-1`, 'any', [newEvent('Added', { index, amount: '1' })]);
        const next = await iterator.next();
        await appended;
        expect(next.done).toBe(false);
        expect((next.value as RecordedEvent[]).map((event) => event.data.index)).toEqual([index]);
      }
    } finally {
      await subscription.close();
    }
  });

  it('a subscription to a quiet category reads on from the head its last read saw, not again from its last event', async () => {
    const readsFrom: bigint[] = [];
    // the store's pool, recording where each subscription read started once it has answered
    const recording = new Proxy(database.pool, {
      get: (target, key) =>
        key === 'query'
          ? async (text: string, params: unknown[]) => {
              const result = await target.query(text, params);
              if (text.includes('left join lateral')) readsFrom.push(BigInt(String(params[0])));
              return result;
            }
          : Reflect.get(target, key, target),
    });
    const watching = createPostgresEventStore({ pool: recording, listenConfig: database.config, logger: createLogger('silent') });
    const quiet = uniqueCategory('quiet');
    const busy = uniqueCategory('busy');
    const subscription = watching.subscribeToAll({ afterPosition: await store.headPosition(), filter: { categories: [quiet] } });
    const iterator = subscription[Symbol.asyncIterator]();
    try {
      const { position: first } = await store.append(`${quiet}-1`, 'no_stream', [newEvent('Quiet')]);
      expect(((await iterator.next()).value as RecordedEvent[]).map((event) => event.position)).toEqual([first]);
      for (let index = 0; index < 30; index++) await store.append(`${busy}-${index}`, 'no_stream', [newEvent('Busy')]);
      const busyHead = await store.headPosition();
      readsFrom.length = 0;
      const next = iterator.next(); // reads after the quiet event, finds nothing up to busyHead, waits
      await waitUntil(() => readsFrom.length > 0, 20_000, 'the read after the quiet event to answer');
      const { position: second } = await store.append(`${quiet}-1`, 0n, [newEvent('Quiet')]);
      expect(((await next).value as RecordedEvent[]).map((event) => event.position)).toEqual([second]);
      expect(readsFrom[0]).toBe(first);
      expect(readsFrom.length).toBeGreaterThan(1);
      // every later read starts at the head the empty one saw: the thirty busy events are not walked again
      expect(readsFrom.slice(1).every((from) => from >= busyHead)).toBe(true);
    } finally {
      await subscription.close();
      await watching.close();
    }
  });
});
