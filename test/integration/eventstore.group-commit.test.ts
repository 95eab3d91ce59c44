import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { DuplicateEventIdError, WrongExpectedRevisionError } from '../../src/eventstore/errors.js';
import type { EventStore, NewEvent } from '../../src/eventstore/port.js';
import { eventStoreMigrations } from '../../src/eventstore/postgres/migrations/index.js';
import { createPostgresEventStore } from '../../src/eventstore/postgres/postgres-event-store.js';
import { createLogger } from '../../src/log.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

const event = (n: number, id = randomUUID()): NewEvent => ({ id, type: 'Counted', data: { n }, metadata: { actor: 'test', at: new Date().toISOString() } });

describe('PostgreSQL event store: group commit', () => {
  let database: TestDatabase;
  let store: EventStore;
  let prefix = 0;
  const stream = (name: string) => `gc${++prefix}-${name}`;

  beforeAll(async () => {
    database = await createTestDatabase('group_commit');
    await migrateToLatest(database.pool, eventStoreMigrations);
    store = createPostgresEventStore({ pool: database.pool, listenConfig: database.config, logger: createLogger('silent') });
  });
  afterAll(async () => {
    await store.close();
    await database.drop();
  });

  it('writes 300 concurrent appends in far fewer transactions, each with its own revision and a gap-free order', async () => {
    const streams = Array.from({ length: 30 }, (_, n) => stream(`s${n}`));
    // ten appends per stream, each expecting exactly the revision before it: chained per stream, concurrent across streams
    const results = await Promise.all(
      streams.map(async (name) => {
        const revisions: bigint[] = [];
        for (let n = 0; n < 10; n++) {
          const { streams: [written] } = await store.append(name, n === 0 ? 'no_stream' : BigInt(n - 1), [event(n)]);
          revisions.push(written!.revision);
        }
        return revisions;
      }),
    );
    for (const revisions of results) expect(revisions).toEqual(Array.from({ length: 10 }, (_, n) => BigInt(n)));
    // each batch is one transaction: the rows' xmin names it (the appends run on the store's own connections, so count on the server)
    const { rows } = await database.pool.query<{ transactions: string }>('select count(distinct xmin::text) as transactions from eventstore.events where stream_id = any($1)', [streams]);
    expect(Number(rows[0]!.transactions)).toBeLessThanOrEqual(150);
    const all = await store.readAll({ filter: { types: ['Counted'] }, maxCount: 10_000 });
    const ours = all.filter((recorded) => streams.includes(recorded.stream));
    expect(ours).toHaveLength(300);
    const positions = ours.map((recorded) => recorded.position);
    expect([...positions].sort((a, b) => (a < b ? -1 : 1))).toEqual(positions);
  });

  it('writers that append again as soon as they are answered share one batch: 8 writers × 20 appends in 21 transactions', async () => {
    const streams = Array.from({ length: 8 }, (_, n) => stream(`loop${n}`));
    await Promise.all(
      streams.map(async (name) => {
        for (let n = 0; n < 20; n++) await store.append(name, n === 0 ? 'no_stream' : BigInt(n - 1), [event(n)]);
      }),
    );
    // the first append finds the appender idle and goes out alone; the other 7 wait for it, and from then on every
    // writer answered asks again before the next batch goes out, so each batch holds all 8 (not 1 and 7 in turn)
    const { rows } = await database.pool.query<{ transactions: string }>('select count(distinct xmin::text) as transactions from eventstore.events where stream_id = any($1)', [streams]);
    expect(Number(rows[0]!.transactions)).toBe(21);
    for (const name of streams) expect((await store.readStream(name)).map((recorded) => recorded.revision)).toEqual(Array.from({ length: 20 }, (_, n) => BigInt(n)));
  });

  it('writers racing for one stream in gathered batches: each revision won once, the losers refused and deciding again, no gap', async () => {
    const contested = stream('raced');
    const wins = await Promise.all(
      Array.from({ length: 8 }, async (_, writer) => {
        let won = 0;
        let known: bigint | null = null;
        for (let attempt = 0; attempt < 200 && won < 5; attempt++) {
          try {
            const { streams: [written] } = await store.append(contested, known ?? 'no_stream', [event(writer * 100 + won)]);
            known = written!.revision;
            won++;
          } catch (error) {
            if (!(error instanceof WrongExpectedRevisionError)) throw error;
            known = error.actual ?? null; // decide again on what the store says, without another read
          }
        }
        return won;
      }),
    );
    expect(wins).toEqual(Array.from({ length: 8 }, () => 5));
    const recorded = await store.readStream(contested);
    expect(recorded.map((event) => event.revision)).toEqual(Array.from({ length: 40 }, (_, n) => BigInt(n)));
    expect(new Set(recorded.map((event) => (event.data as { n: number }).n)).size).toBe(40);
    const positions = recorded.map((event) => event.position);
    expect([...positions].sort((a, b) => (a < b ? -1 : 1))).toEqual(positions);
  });

  it('one poisoned append (a string jsonb cannot hold) among concurrent appends of other tenants fails alone; every other one commits', async () => {
    const tenants = Array.from({ length: 40 }, (_, n) => stream(`tenant${n}`));
    const poisoned = stream('poisoned');
    const poison: NewEvent = { ...event(0), data: { note: 'note\u0000' } };
    const answers = await Promise.allSettled([
      ...tenants.slice(0, 20).map((name, n) => store.append(name, 'no_stream', [event(n)])),
      store.append(poisoned, 'no_stream', [poison]),
      ...tenants.slice(20).map((name, n) => store.append(name, 'no_stream', [event(n)])),
    ]);
    const refused = answers.filter((answer) => answer.status === 'rejected');
    expect(refused).toHaveLength(1);
    expect(answers[20]!.status).toBe('rejected');
    for (const name of tenants) expect(await store.readStream(name)).toHaveLength(1);
    expect(await store.readStream(poisoned)).toEqual([]);
  });

  it('decides appends of one batch in order: of two on one revision the first wins, the second is refused alone', async () => {
    const [contested, other] = [stream('contested'), stream('other')];
    await store.append(contested, 'no_stream', [event(0)]);
    const outcomes = await Promise.allSettled([
      store.append(contested, 0n, [event(1)]),
      store.append(contested, 0n, [event(2)]),
      store.append(other, 'no_stream', [event(3)]),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const refused = (outcomes[1] as PromiseRejectedResult).reason as WrongExpectedRevisionError;
    expect(refused).toBeInstanceOf(WrongExpectedRevisionError);
    expect(refused.actual).toBe(1n);
    expect((await store.readStream(contested)).map((recorded) => recorded.data)).toEqual([{ n: 0 }, { n: 1 }]);
  });

  it('keeps a multi-stream append atomic inside a batch: one stream refused, nothing of it written, its neighbours written', async () => {
    const [a, b, c] = [stream('a'), stream('b'), stream('c')];
    await store.append(b, 'no_stream', [event(0)]);
    const outcomes = await Promise.allSettled([
      store.appendMany([
        { stream: a, expectedRevision: 'no_stream', events: [event(1)] },
        { stream: b, expectedRevision: 'no_stream', events: [event(2)] },
      ]),
      store.append(c, 'no_stream', [event(3)]),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'fulfilled']);
    expect(await store.readStream(a)).toEqual([]);
    expect(await store.streamRevision(a)).toBeNull();
    expect(await store.readStream(b)).toHaveLength(1);
    expect(await store.readStream(c)).toHaveLength(1);
  });

  it('answers a retried append with what is stored, and refuses an event id another stream holds, in the same batch', async () => {
    const [first, second, third] = [stream('first'), stream('second'), stream('third')];
    const stored = event(1);
    const written = await store.append(first, 'no_stream', [stored]);
    const outcomes = await Promise.allSettled([
      store.append(first, 'no_stream', [stored]), // the retry of an append that succeeded
      store.append(second, 'no_stream', [{ ...stored }]), // the same id elsewhere
      store.append(third, 'no_stream', [event(2)]),
    ]);
    expect(outcomes[0]).toEqual({ status: 'fulfilled', value: written });
    expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(DuplicateEventIdError);
    expect(outcomes[2]!.status).toBe('fulfilled');
    expect(await store.readStream(second)).toEqual([]);
  });

  it('two ids of one batch: the second use of an id is refused even before either is stored', async () => {
    const [x, y] = [stream('x'), stream('y')];
    const shared = randomUUID();
    const outcomes = await Promise.allSettled([store.append(x, 'no_stream', [event(1, shared)]), store.append(y, 'no_stream', [event(2, shared)])]);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    expect(((outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult).reason as Error)).toBeInstanceOf(DuplicateEventIdError);
  });
});
