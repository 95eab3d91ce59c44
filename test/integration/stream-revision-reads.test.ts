import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentRevision } from '../../src/application/stream-revisions.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import type { EventStore, NewEvent } from '../../src/eventstore/port.js';
import { eventStoreMigrations } from '../../src/eventstore/postgres/migrations/index.js';
import { createPostgresEventStore } from '../../src/eventstore/postgres/postgres-event-store.js';
import { createLogger } from '../../src/log.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

const event = (): NewEvent => ({ id: randomUUID(), type: 'Counted', data: {}, metadata: { actor: 'test', at: new Date().toISOString() } });

/** one turn of the event loop, so that each ask below is a separate turn's (a separate ledger batch's) */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Revision reads are shared across ledgers: what is asked while a read is in flight goes out
 * together in the next read, each answer still the store's at a moment after its ask.
 */
describe('stream revisions: asks of many turns share one read (real PostgreSQL)', () => {
  let database: TestDatabase;
  let store: EventStore;

  beforeAll(async () => {
    database = await createTestDatabase('revision_reads');
    await migrateToLatest(database.pool, eventStoreMigrations);
    store = createPostgresEventStore({ pool: database.pool, listenConfig: database.config, logger: createLogger('silent') });
  });
  afterAll(async () => {
    await store.close();
    await database.drop();
  });

  it('asks made in 5 turns while a read is held go out in one read; a stream appended after its ask is answered at its new revision', async () => {
    const [held, a, b, c, appendedLater] = ['held', 'a', 'b', 'c', 'later'].map((name) => `rev-${name}-${randomUUID()}`) as [string, string, string, string, string];
    await store.append(a, 'no_stream', [event(), event()]);
    await store.append(b, 'no_stream', [event()]);
    await store.append(appendedLater, 'no_stream', [event()]);

    let releaseFirst = () => undefined as void;
    const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
    const reads: string[][] = [];
    const watched: Pick<EventStore, 'streamRevisions'> = {
      streamRevisions: async (asked) => {
        reads.push([...asked]);
        if (reads.length === 1) await firstHeld;
        return store.streamRevisions(asked);
      },
    };

    const first = currentRevision(watched, held);
    await nextTurn();
    expect(reads).toEqual([[held]]);
    const asked: Promise<bigint | null>[] = [];
    for (const stream of [a, b, c, a, appendedLater]) {
      asked.push(currentRevision(watched, stream));
      await nextTurn();
    }
    // asked before the append: the read that answers it starts after the append, so it sees it
    await store.append(appendedLater, 0n, [event()]);
    expect(reads).toHaveLength(1);
    releaseFirst();

    expect(await first).toBeNull();
    expect(await Promise.all(asked)).toEqual([1n, 0n, null, 1n, 1n]);
    expect(reads).toHaveLength(2);
    expect(reads[1]).toEqual([a, b, c, appendedLater]);
  });

  it('a read that fails answers its asks with the error, and the next ask reads again', async () => {
    let fail = true;
    const flaky: Pick<EventStore, 'streamRevisions'> = {
      streamRevisions: async (asked) => {
        if (fail) throw new Error('connection lost');
        return store.streamRevisions(asked);
      },
    };
    await expect(currentRevision(flaky, 'rev-flaky')).rejects.toThrow('connection lost');
    fail = false;
    expect(await currentRevision(flaky, 'rev-flaky')).toBeNull();
  });
});
