import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { categoryOf, type ExpectedRevision, type NewEvent, type StreamAppend } from '../../src/eventstore/port.js';
import { APPEND_BATCH_SQL, appendBatchParameters, batchOutcomes, encodeExpected, type AppendBatchRow } from '../../src/eventstore/postgres/append-batch-parameters.js';
import { eventStoreMigrations } from '../../src/eventstore/postgres/migrations/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * `eventstore.append_batch_positions` (what the store calls) with exact batches (no group commit
 * timing involved): it decides every batch as the one-item-at-a-time jsonb form did.
 */

type Outcome = { position: string; streams: { stream: string; revision: string }[] } | { error: string; [key: string]: string };

const event = (n: number, id: string = randomUUID()): NewEvent => ({ id, type: 'Counted', data: { n }, metadata: { actor: 'test', at: '2026-11-26T11:00:00.000Z' } });
const append = (stream: string, expectedRevision: ExpectedRevision, events: NewEvent[]): StreamAppend => ({ stream, expectedRevision, events });

const setBased = async (client: pg.Pool | pg.ClientBase, batch: StreamAppend[][]): Promise<Outcome[]> =>
  batchOutcomes(batch, (await client.query<AppendBatchRow>(APPEND_BATCH_SQL, appendBatchParameters(batch))).rows[0]!) as Outcome[];

/** the call the previous version made (20261124T0900-append-batch-from-indexes, still installed) */
const itemAtATime = async (client: pg.Pool | pg.ClientBase, batch: StreamAppend[][]): Promise<Outcome[]> => {
  const payload = batch.map((appends) =>
    appends.map(({ stream, expectedRevision, events }) => ({ stream, category: categoryOf(stream), expected: encodeExpected(expectedRevision), events })),
  );
  return (await client.query<{ result: Outcome[] }>('select eventstore.append_batch($1::jsonb) as result', [JSON.stringify(payload)])).rows[0]!.result;
};

/** A deterministic pseudo-random sequence (mulberry32), so a failing batch can be found again. */
const randomFrom = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

describe('eventstore.append_batch_positions', () => {
  let database: TestDatabase;
  let prefix = 0;
  const stream = (name: string) => `ab${++prefix}-${name}`;

  beforeAll(async () => {
    database = await createTestDatabase('append_batch');
    await migrateToLatest(database.pool, eventStoreMigrations);
  });
  afterAll(async () => {
    await database.drop();
  });

  const revisionOf = async (name: string) =>
    (await database.pool.query<{ revision: string }>('select revision::text from eventstore.streams where stream_id = $1', [name])).rows[0]?.revision ?? null;
  const eventsOf = async (name: string) =>
    (await database.pool.query<{ revision: string; n: number }>("select revision::text, (data->>'n')::int as n from eventstore.events where stream_id = $1 order by revision", [name])).rows;

  it('two appends to one stream in one batch, the first on a wrong revision: the first is refused alone, the second is decided without it', async () => {
    const [s, other] = [stream('s'), stream('other')];
    await setBased(database.pool, [[append(s, 'no_stream', [event(0)])]]);
    const outcomes = await setBased(database.pool, [
      [append(s, 5n, [event(1), event(2)])], // wrong: the stream is at 0
      [append(other, 'no_stream', [event(3)])],
      [append(s, 0n, [event(4)])], // right only because the first was refused
      [append(s, 0n, [event(5)])], // wrong: the third moved it to 1
    ]);
    expect(outcomes[0]).toEqual({ error: 'wrong_expected_revision', stream: s, expected: '5', actual: '0' });
    expect(outcomes[1]).toMatchObject({ streams: [{ stream: other, revision: '0' }] });
    expect(outcomes[2]).toMatchObject({ streams: [{ stream: s, revision: '1' }] });
    expect(outcomes[3]).toEqual({ error: 'wrong_expected_revision', stream: s, expected: '0', actual: '1' });
    expect(await eventsOf(s)).toEqual([{ revision: '0', n: 0 }, { revision: '1', n: 4 }]);
    expect(await revisionOf(s)).toBe('1');
  });

  it('a batch mixing retries of stored events, an id reused inside the batch and new events: only the new ones are written, in batch order', async () => {
    const [stored, fresh, again, reuser] = [stream('stored'), stream('fresh'), stream('again'), stream('reuser')];
    const kept = event(0);
    await setBased(database.pool, [[append(stored, 'no_stream', [kept])]]);
    const shared = randomUUID();
    const outcomes = await setBased(database.pool, [
      [append(stored, 'no_stream', [kept])], // a retry: refused here (its revision first), answered with what is stored by the appender
      [append(fresh, 'no_stream', [event(1), event(2, shared)])],
      [append(reuser, 'no_stream', [event(3, shared)])], // the id the item before it took
      [append(again, 'any', [event(4)]), append(stored, 0n, [event(5)])],
      [append(stored, 1n, [kept])], // a retry at the right revision: refused for its id
    ]);
    expect(outcomes[4]).toEqual({ error: 'duplicate_event_id', eventId: kept.id });
    expect(outcomes[0]).toEqual({ error: 'wrong_expected_revision', stream: stored, expected: 'no_stream', actual: '0' });
    expect(outcomes[2]).toEqual({ error: 'duplicate_event_id', eventId: shared });
    const [second, fourth] = [outcomes[1] as { position: string }, outcomes[3] as { position: string; streams: unknown }];
    expect(BigInt(fourth.position) - BigInt(second.position)).toBe(2n); // the second's two events, then the fourth's two
    expect(fourth.streams).toEqual([{ stream: again, revision: '0' }, { stream: stored, revision: '1' }]);
    expect(await revisionOf(reuser)).toBeNull(); // named only by a refused item: no stream row is left behind
    expect((await eventsOf(stored)).map((row) => row.n)).toEqual([0, 5]);
    const positions = await database.pool.query<{ stream_id: string; revision: string }>(
      'select stream_id, revision::text from eventstore.events where stream_id = any($1) order by position',
      [[fresh, again, stored]],
    );
    expect(positions.rows.slice(-4)).toEqual([
      { stream_id: fresh, revision: '0' },
      { stream_id: fresh, revision: '1' },
      { stream_id: again, revision: '0' },
      { stream_id: stored, revision: '1' },
    ]);
  });

  it('checks (appends of no events): several items checking one stream at its head are all written; a check behind a write of its stream in the batch sees that write', async () => {
    const [checked, unborn] = [stream('checked'), stream('unborn')];
    await setBased(database.pool, [[append(checked, 'no_stream', [event(0)])]]);
    const own = [stream('a'), stream('b'), stream('c')];
    const fast = await setBased(database.pool, own.map((name, n) => [append(name, 'no_stream', [event(n)]), append(checked, 0n, []), append(unborn, 'no_stream', [])]));
    expect(fast).toEqual(own.map((name) => ({ position: expect.any(String), streams: [{ stream: name, revision: '0' }, { stream: checked, revision: '0' }, { stream: unborn, revision: '-1' }] })));
    expect(await revisionOf(checked)).toBe('0');
    expect(await revisionOf(unborn)).toBeNull(); // locked to be checked, then removed: no stream row is left behind

    const [d, e, f] = [stream('d'), stream('e'), stream('f')];
    const mixed = await setBased(database.pool, [
      [append(d, 'no_stream', [event(1)]), append(checked, 0n, [])],
      [append(checked, 0n, [event(2)])], // moves it to 1
      [append(e, 'no_stream', [event(3)]), append(checked, 0n, [])], // wrong: the item before moved it
      [append(f, 'no_stream', [event(4)]), append(checked, 1n, [])],
    ]);
    expect(mixed[0]).toMatchObject({ streams: [{ stream: d, revision: '0' }, { stream: checked, revision: '0' }] });
    expect(mixed[1]).toMatchObject({ streams: [{ stream: checked, revision: '1' }] });
    expect(mixed[2]).toEqual({ error: 'wrong_expected_revision', stream: checked, expected: '0', actual: '1' });
    expect(mixed[3]).toMatchObject({ streams: [{ stream: f, revision: '0' }, { stream: checked, revision: '1' }] });
    expect(await revisionOf(e)).toBeNull();
    expect((await eventsOf(checked)).map((row) => row.n)).toEqual([0, 2]);
  });

  it('refuses a batch whose arrays do not match with a clear error, and writes nothing', async () => {
    const s = stream('bad');
    const parameters = appendBatchParameters([[append(s, 'no_stream', [event(0), event(1)])]]);
    parameters[4] = [3]; // the append claims three events where two are given
    await expect(database.pool.query(APPEND_BATCH_SQL, parameters)).rejects.toThrow(/differ|count/);
    parameters[4] = [2];
    parameters[7] = ['Counted']; // one type for two events
    await expect(database.pool.query(APPEND_BATCH_SQL, parameters)).rejects.toThrow(/differ in length/);
    expect(await revisionOf(s)).toBeNull();
  });

  it('a batch waiting for a stream another batch holds decides on that batch once committed', async () => {
    const s = stream('held');
    await setBased(database.pool, [[append(s, 'no_stream', [event(0)])]]);
    const [holder, waiter] = [await database.pool.connect(), await database.pool.connect()];
    try {
      await holder.query('begin');
      expect(await setBased(holder, [[append(s, 0n, [event(1)])]])).toMatchObject([{ streams: [{ revision: '1' }] }]);
      const waiting = setBased(waiter, [[append(s, 1n, [event(2)])], [append(s, 0n, [event(3)])]]);
      await waitUntilBlocked(database.pool, waiter);
      await holder.query('commit');
      const [accepted, refused] = await waiting;
      expect(accepted).toMatchObject({ streams: [{ stream: s, revision: '2' }] });
      expect(refused).toEqual({ error: 'wrong_expected_revision', stream: s, expected: '0', actual: '2' });
    } finally {
      holder.release();
      waiter.release();
    }
    expect((await eventsOf(s)).map((row) => row.n)).toEqual([0, 1, 2]);
  });

  it('two batches creating the same new stream: the second waits for the first, and decides on its commit', async () => {
    const s = stream('born');
    const [holder, waiter] = [await database.pool.connect(), await database.pool.connect()];
    try {
      await holder.query('begin');
      expect(await setBased(holder, [[append(s, 'no_stream', [event(0)])]])).toMatchObject([{ streams: [{ stream: s, revision: '0' }] }]);
      const waiting = setBased(waiter, [[append(s, 'no_stream', [event(1)])], [append(s, 0n, [event(2)])]]);
      await waitUntilBlocked(database.pool, waiter);
      await holder.query('commit');
      const [refused, accepted] = await waiting;
      expect(refused).toEqual({ error: 'wrong_expected_revision', stream: s, expected: 'no_stream', actual: '0' });
      expect(accepted).toMatchObject({ streams: [{ stream: s, revision: '1' }] });
    } finally {
      holder.release();
      waiter.release();
    }
    expect((await eventsOf(s)).map((row) => row.n)).toEqual([0, 2]);
  });

  it('two batches creating the same new stream, the first rolled back: the second creates it', async () => {
    const s = stream('unborn');
    const [holder, waiter] = [await database.pool.connect(), await database.pool.connect()];
    try {
      await holder.query('begin');
      await setBased(holder, [[append(s, 'no_stream', [event(0)])]]);
      const waiting = setBased(waiter, [[append(s, 'no_stream', [event(1)])]]);
      await waitUntilBlocked(database.pool, waiter);
      await holder.query('rollback');
      expect(await waiting).toMatchObject([{ streams: [{ stream: s, revision: '0' }] }]);
    } finally {
      holder.release();
      waiter.release();
    }
    expect(await eventsOf(s)).toEqual([{ revision: '0', n: 1 }]);
    expect(await revisionOf(s)).toBe('0');
  });

  it('a batch whose every stream is named once and right is written on its heads; the same streams twice are decided in order', async () => {
    const [a, b] = [stream('a'), stream('b')];
    await setBased(database.pool, [[append(a, 'no_stream', [event(0)])]]);
    expect(await setBased(database.pool, [[append(a, 0n, [event(1), event(2)])], [append(b, 'no_stream', [event(3)])]])).toMatchObject([
      { streams: [{ stream: a, revision: '2' }] },
      { streams: [{ stream: b, revision: '0' }] },
    ]);
    expect(
      await setBased(database.pool, [[append(a, 2n, [event(4)]), append(b, 'stream_exists', [event(5)])], [append(a, 3n, [event(6), event(7)])], [append(b, 1n, [event(8)])]]),
    ).toMatchObject([{ streams: [{ stream: a, revision: '3' }, { stream: b, revision: '1' }] }, { streams: [{ stream: a, revision: '5' }] }, { streams: [{ stream: b, revision: '2' }] }]);
    expect((await eventsOf(a)).map((row) => `${row.revision}:${row.n}`)).toEqual(['0:0', '1:1', '2:2', '3:4', '4:6', '5:7']);
    expect(await revisionOf(b)).toBe('2');
  });

  it('writes stream names and types that an array literal must escape, beside plain ones, exactly as given', async () => {
    const names = [stream('plain'), stream('a "quoted", {braced} \\ name'), stream('tab\tand NULL'), stream('ünïcödé')];
    const types = ['Counted', 'Say "hi" \\ {x}', 'Line\nbreak', 'Plain'];
    const outcomes = await setBased(database.pool, [
      names.map((name, index) => append(name, 'no_stream', [{ ...event(index), type: types[index]! }])),
      [append(stream('alone'), 'no_stream', [event(9)])],
    ]);
    expect(outcomes.every((outcome) => 'position' in outcome)).toBe(true);
    const { rows } = await database.pool.query<{ stream_id: string; type: string }>('select stream_id, type from eventstore.events where stream_id = any($1::text[]) order by position', [names]);
    expect(rows).toEqual(names.map((name, index) => ({ stream_id: name, type: types[index] })));
    // no element to escape: the arrays go as literals, non-ASCII names among them
    const unescaped = stream('ünïcödé → ☃');
    expect(await setBased(database.pool, [[append(unescaped, 'no_stream', [{ ...event(10), type: 'Ünïcödé' }])]])).toEqual([{ position: expect.any(String), streams: [{ stream: unescaped, revision: '0' }] }]);
    expect((await database.pool.query<{ type: string }>('select type from eventstore.events where stream_id = $1', [unescaped])).rows).toEqual([{ type: 'Ünïcödé' }]);
  });

  it('a batch cut off while it waits for the append lock leaves nothing behind, and the next one writes at the same revisions', async () => {
    const [s, created] = [stream('cut'), stream('created')];
    await setBased(database.pool, [[append(s, 'no_stream', [event(0)])]]);
    const [locker, victim] = [await database.pool.connect(), await database.pool.connect()];
    let victimGone = false;
    try {
      await locker.query('begin');
      await locker.query('select pg_advisory_xact_lock(7370126172797466625)'); // the append lock
      victim.on('error', () => undefined);
      const cut = setBased(victim, [[append(s, 0n, [event(1)]), append(created, 'no_stream', [event(2)])]]).catch((error: unknown) => error);
      await waitUntilBlocked(database.pool, victim);
      const pid = (victim as unknown as { processID: number }).processID;
      await database.pool.query('select pg_terminate_backend($1)', [pid]);
      expect(await cut).toBeInstanceOf(Error);
      victimGone = true;
      await locker.query('rollback');
    } finally {
      locker.release();
      victim.release(victimGone);
    }
    expect(await revisionOf(s)).toBe('0');
    expect(await revisionOf(created)).toBeNull();
    expect(await setBased(database.pool, [[append(s, 0n, [event(3)]), append(created, 'no_stream', [event(4)])]])).toMatchObject([
      { streams: [{ stream: s, revision: '1' }, { stream: created, revision: '0' }] },
    ]);
  });

  it('decides 300 random batches exactly as the item-at-a-time form did: same answers, same events, same stream heads', async () => {
    const random = randomFrom(20261126);
    const pick = <T>(values: T[]): T => values[Math.floor(random() * values.length)]!;
    const names = Array.from({ length: 6 }, (_, n) => stream(`r${n}`));
    const heads = new Map<string, number>(); // committed revisions, to aim most expectations right
    const storedIds: string[] = [];
    const kinds = new Map<string, number>();
    const client = await database.pool.connect();
    const lastPosition = async () => {
      const { rows } = await client.query<{ last: string }>('select (case when is_called then last_value else last_value - 1 end)::text as last from eventstore.global_position_seq');
      return BigInt(rows[0]!.last);
    };
    /** what the batch wrote (positions counted from just before it) and the heads it left */
    const stateAfter = async (before: bigint) => {
      const events = await client.query<{ stream_id: string; revision: string; event_id: string; type: string; data: unknown; metadata: unknown; position: string }>(
        'select stream_id, revision::text, event_id::text, type, data, metadata, position::text from eventstore.events where position > $1::bigint order by eventstore.events.position',
        [before.toString()],
      );
      const streams = await client.query('select stream_id, revision::text from eventstore.streams where stream_id = any($1) order by stream_id', [names]);
      return { first: before, events: events.rows.map((row) => ({ ...row, position: String(BigInt(row.position) - before) })), streams: streams.rows };
    };
    const relative = (outcomes: Outcome[], first: bigint) =>
      outcomes.map((outcome) => ('position' in outcome && typeof outcome.position === 'string' ? { ...outcome, position: String(BigInt(outcome.position) - first) } : outcome));
    try {
      for (let round = 0; round < 300; round++) {
        const usedInBatch: string[] = [];
        const batch = Array.from({ length: 1 + Math.floor(random() * 6) }, () => {
          const streams = [...names].sort(() => random() - 0.5).slice(0, 1 + Math.floor(random() * 3));
          const idsInItem = new Set<string>();
          return streams.map((name) => {
            const head = heads.get(name);
            const expected = pick<ExpectedRevision>([
              'any',
              'no_stream',
              'stream_exists',
              BigInt(head ?? 0),
              BigInt(head ?? 0),
              BigInt((head ?? 0) + 1),
              BigInt(Math.floor(random() * 4)),
            ]);
            const events = Array.from({ length: 1 + Math.floor(random() * 3) }, (_, n) => {
              const reuse = random() < 0.1 ? pick([...storedIds.slice(-20), ...usedInBatch]) : undefined;
              const id = reuse !== undefined && !idsInItem.has(reuse) ? reuse : randomUUID();
              idsInItem.add(id);
              usedInBatch.push(id);
              return event(round * 10 + n, id);
            });
            return append(name, expected, events);
          });
        });
        const batchIds = batch.flatMap((item) => item.flatMap((a) => a.events.map((e) => e.id)));

        await client.query('begin');
        const beforeBase = await lastPosition();
        const before = await itemAtATime(client, batch);
        const beforeState = await stateAfter(beforeBase);
        await client.query('rollback');
        await client.query('begin');
        const afterBase = await lastPosition();
        const after = await setBased(client, batch);
        const afterState = await stateAfter(afterBase);
        await client.query(random() < 0.5 ? 'commit' : 'rollback'); // half of them move the store on, for the next batches

        expect({ round, outcomes: relative(after, afterState.first), events: afterState.events, streams: afterState.streams }).toEqual({
          round,
          outcomes: relative(before, beforeState.first),
          events: beforeState.events,
          streams: beforeState.streams,
        });
        for (const outcome of after) {
          const kind = 'error' in outcome ? outcome.error : 'written';
          kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
        }
        const committed = await database.pool.query<{ stream_id: string; revision: string }>('select stream_id, revision::text from eventstore.streams where stream_id = any($1)', [names]);
        heads.clear();
        for (const row of committed.rows) heads.set(row.stream_id, Number(row.revision));
        const stored = await database.pool.query<{ id: string }>('select event_id::text as id from eventstore.events where event_id = any($1::uuid[])', [batchIds]);
        storedIds.push(...stored.rows.map((row) => row.id));
      }
    } finally {
      client.release();
    }
    // the batches met every kind of answer, many times
    expect(Math.min(...['written', 'wrong_expected_revision', 'duplicate_event_id'].map((kind) => kinds.get(kind) ?? 0))).toBeGreaterThan(20);
  });
});

/** Until the client's backend waits for a lock (a row lock or the append lock). */
const waitUntilBlocked = async (pool: pg.Pool, client: pg.ClientBase) => {
  const pid = (client as unknown as { processID: number }).processID;
  for (;;) {
    const { rows } = await pool.query<{ waiting: boolean }>("select wait_event_type = 'Lock' as waiting from pg_stat_activity where pid = $1", [pid]);
    if (rows[0]?.waiting) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};
