import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { withdrawalLifecycles } from '../../bench/lib/withdrawal-lifecycles.js';
import { nativeToken } from '../../src/catalog/tokens.js';
import { createDatabase, databaseOnClient } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { eventStoreMigrations } from '../../src/eventstore/postgres/migrations/index.js';
import { createPostgresEventStore } from '../../src/eventstore/postgres/postgres-event-store.js';
import type { EventStore, RecordedEvent } from '../../src/eventstore/port.js';
import { createLogger } from '../../src/log.js';
import { applyBatch, CheckpointMovedError, projectionSession, readCheckpoint } from '../../src/projections/checkpoint.js';
import { readModelMigrations } from '../../src/projections/migrations/index.js';
import type { Projection } from '../../src/projections/projection.js';
import { withdrawalsProjection } from '../../src/projections/withdrawals.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

const logger = createLogger('silent');
const token = nativeToken('eip155:1');

/**
 * A projection batch on the runner's (pipelining) session: BEGIN goes out with the checkpoint's
 * lock and the handler's first read right behind it; the handler's writes go out with the
 * checkpoint's compare-and-update and COMMIT, without waiting for the lock's answer: a batch whose
 * handler only writes costs one round trip, one whose handler reads once two. Whatever
 * fails (the lock, the handler, a write, the checkpoint's update, the commit), nothing of the batch
 * stays, the checkpoint does not move, and the session is left outside any transaction.
 */
describe('a projection batch in one or two round trips', () => {
  let database: TestDatabase;
  let store: EventStore;
  let client: pg.Client;
  let queries: string[];
  /** times the session sent a query while none was waiting for its answer */
  let roundTrips: number;
  let sessionPid: number;
  const db = () => createDatabase(database.pool);

  beforeAll(async () => {
    database = await createTestDatabase('batch_round_trips');
    await migrateToLatest(database.pool, eventStoreMigrations);
    await migrateToLatest(database.pool, readModelMigrations);
    store = createPostgresEventStore({ pool: database.pool, listenConfig: database.config, logger });
    const generator = withdrawalLifecycles({ orgIds: ['org_rtA'], tokenId: token.id, chainId: token.chainId, start: new Date('2026-11-26T10:00:00Z') });
    for (let index = 0; index < 4; index++) for (const step of generator.lifecycle(index)) await store.appendMany(step);
  });
  afterAll(async () => {
    await store.close();
    await database.drop();
  });
  beforeEach(async () => {
    await db().deleteFrom('withdrawals').execute();
    await db().deleteFrom('webhook_deliveries').execute();
    await db().deleteFrom('projection_checkpoints').execute();
    client = new pg.Client({ ...database.config, pipeline: true });
    await client.connect();
    await readCheckpoint(databaseOnClient(client), withdrawalsProjection.name);
    sessionPid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    // every query the session sends, in order (a string of several statements is one), and the round trips
    queries = [];
    roundTrips = 0;
    let waiting = 0;
    const send = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
    (client as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = (...args: unknown[]) => {
      queries.push(typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: string }).text));
      if (waiting++ === 0) roundTrips++;
      const answered = send(...args);
      // counted down as its answer comes, before the caller's continuation can send more
      void answered.then(
        () => waiting--,
        () => waiting--,
      );
      return answered;
    };
  });
  afterEach(async () => {
    await client.end();
  });

  const withdrawalEvents = async () => store.readAll({ filter: withdrawalsProjection.filter, maxCount: 100 });
  const rowCount = async () => Number((await db().selectFrom('withdrawals').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  /** whether the session is inside a transaction, as the server sees it (asked on another connection) */
  const inTransaction = async () => {
    const { rows } = await database.pool.query<{ state: string }>('select state from pg_stat_activity where pid = $1', [sessionPid]);
    return rows[0]!.state !== 'idle';
  };

  it('sends begin with the lock and the first read, then the writes with the checkpoint and commit', async () => {
    const events = await withdrawalEvents();
    // the first withdrawal's request alone (nothing to read: one round trip), then the rest: that batch reads the first's row
    const first = await applyBatch(projectionSession(client), withdrawalsProjection, events.slice(0, 1), 0n);
    expect(queries.map((query) => query.trim().split(/\s+/)[0])).toEqual(['begin;', 'insert', 'with', 'update']);
    expect(roundTrips).toBe(1);
    queries = [];
    roundTrips = 0;
    const reached = await applyBatch(projectionSession(client), withdrawalsProjection, events.slice(1), first);

    expect(reached).toBe(events.at(-1)!.position);
    expect(queries[0]).toMatch(/^begin; do \$checkpoint\$.* for update;.*\$checkpoint\$$/s);
    expect(queries[1]).toMatch(/^select .* from "withdrawals" .* for update$/s);
    // the new rows, the updated ones, the webhooks, then the checkpoint with the commit
    expect(queries.slice(2, -1).map((query) => query.trim().split(/\s+/)[0])).toEqual(['insert', 'update', 'with']);
    expect(queries.at(-1)).toMatch(/^update projection_checkpoints .*; commit$/s);
    expect(roundTrips).toBe(2);
    expect(await readCheckpoint(db(), withdrawalsProjection.name)).toBe(reached);
    expect(await rowCount()).toBe(4);
    expect(await inTransaction()).toBe(false);
  });

  it('writes each round trip to the socket at once: one write for a batch that only writes, two for one that reads', async () => {
    const events = await withdrawalEvents();
    const socket = (client as unknown as { connection: { stream: { _write: (...args: unknown[]) => void; _writev: (...args: unknown[]) => void } } }).connection.stream;
    let writes = 0;
    for (const method of ['_write', '_writev'] as const) {
      const original = socket[method].bind(socket);
      socket[method] = (...args: unknown[]) => {
        writes++;
        original(...args);
      };
    }
    const first = await applyBatch(projectionSession(client), withdrawalsProjection, events.slice(0, 1), 0n);
    expect(writes).toBe(1);
    writes = 0;
    await applyBatch(projectionSession(client), withdrawalsProjection, events.slice(1), first);
    expect(writes).toBe(2);
    expect(await rowCount()).toBe(4);
  });

  it('prepares each statement with parameters once per session: the same batch again prepares nothing more', async () => {
    const events = await withdrawalEvents();
    const prepared = async () => (await client.query<{ statement: string }>('select statement from pg_prepared_statements order by name')).rows.map((row) => row.statement);
    await applyBatch(projectionSession(client), withdrawalsProjection, events.slice(0, 1), 0n);
    const first = await prepared();
    // the row's insert and the webhook's (the checkpoint's update goes with the commit, as plain text)
    expect(first.map((statement) => statement.trim().split(/\s+/)[0])).toEqual(['insert', 'with']);

    await db().deleteFrom('withdrawals').execute();
    await db().deleteFrom('webhook_deliveries').execute();
    await database.pool.query('update projection_checkpoints set position = 0 where name = $1', [withdrawalsProjection.name]);
    await applyBatch(projectionSession(client), withdrawalsProjection, events.slice(0, 1), 0n);
    expect(await prepared()).toEqual(first);
    expect(await rowCount()).toBe(1);
  });

  it('applies nothing and moves nothing when the checkpoint is not where the runner left it', async () => {
    const events = await withdrawalEvents();
    await expect(applyBatch(projectionSession(client), withdrawalsProjection, events, 7n)).rejects.toBeInstanceOf(CheckpointMovedError);

    expect(queries.at(-1)).toBe('rollback');
    expect(await readCheckpoint(db(), withdrawalsProjection.name)).toBe(0n);
    expect(await rowCount()).toBe(0);
    expect(await inTransaction()).toBe(false);
  });

  it('rolls the handler back when the checkpoint update fails, and when the handler throws', async () => {
    const events = await withdrawalEvents();
    // the checkpoint's update fails (a constraint refuses the position it moves to)
    await db().schema.alterTable('projection_checkpoints').addCheckConstraint('round_trips_refuse', sql`position < 1`).execute();
    try {
      await expect(applyBatch(projectionSession(client), withdrawalsProjection, events, 0n)).rejects.toThrow(/round_trips_refuse/);
    } finally {
      await db().schema.alterTable('projection_checkpoints').dropConstraint('round_trips_refuse').execute();
    }
    expect(await rowCount()).toBe(0);
    expect(await db().selectFrom('webhook_deliveries').selectAll().execute()).toHaveLength(0);
    expect(await inTransaction()).toBe(false);

    const throwing: Projection = {
      ...withdrawalsProjection,
      handleBatch: async (trx, batch: RecordedEvent[], outbox) => {
        await withdrawalsProjection.handleBatch!(trx, batch, outbox);
        throw new Error('handler failed after writing');
      },
    };
    await expect(applyBatch(projectionSession(client), throwing, events, 0n)).rejects.toThrow('handler failed after writing');
    expect(await rowCount()).toBe(0);
    expect(await readCheckpoint(db(), withdrawalsProjection.name)).toBe(0n);

    // and the session goes on: the next batch applies
    expect(await applyBatch(projectionSession(client), withdrawalsProjection, events, 0n)).toBe(events.at(-1)!.position);
    expect(await rowCount()).toBe(4);
  });

  it('rolls everything back when a held write fails, and the session goes on', async () => {
    const events = await withdrawalEvents();
    const first = await applyBatch(projectionSession(client), withdrawalsProjection, events.slice(0, 1), 0n);
    // the same request again: its insert, held back to the commit, fails on the primary key
    const again = { ...events[0]!, id: randomUUID(), position: first + 1n };
    await expect(applyBatch(projectionSession(client), withdrawalsProjection, [again], first)).rejects.toThrow(/duplicate key/);

    expect(queries.at(-1)).toBe('rollback');
    expect(await inTransaction()).toBe(false);
    expect(await readCheckpoint(db(), withdrawalsProjection.name)).toBe(first);
    expect(await rowCount()).toBe(1);
    expect(await db().selectFrom('webhook_deliveries').selectAll().execute()).toHaveLength(1);
    expect(await applyBatch(projectionSession(client), withdrawalsProjection, events.slice(1), first)).toBe(events.at(-1)!.position);
    expect(await rowCount()).toBe(4);
  });

  it('sends the writes held back before a read, so the read sees them', async () => {
    const events = await withdrawalEvents();
    const seen: number[] = [];
    const readingAfterWrites: Projection = {
      ...withdrawalsProjection,
      handleBatch: async (trx, batch, outbox) => {
        await withdrawalsProjection.handleBatch!(trx, batch, outbox);
        const { n } = await trx.selectFrom('withdrawals').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
        seen.push(Number(n));
      },
    };
    await applyBatch(projectionSession(client), readingAfterWrites, events, 0n);

    expect(seen).toEqual([4]);
    expect(await rowCount()).toBe(4);
  });

  it('applies a batch once when two sessions send it at once: the second finds the checkpoint moved', async () => {
    const events = await withdrawalEvents();
    const other = new pg.Client({ ...database.config, pipeline: true });
    await other.connect();
    try {
      const outcomes = await Promise.allSettled([
        applyBatch(projectionSession(client), withdrawalsProjection, events, 0n),
        applyBatch(projectionSession(other), withdrawalsProjection, events, 0n),
      ]);
      expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
      const refused = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected')!;
      expect(refused.reason).toBeInstanceOf(CheckpointMovedError);
      expect((refused.reason as CheckpointMovedError).actual).toBe(events.at(-1)!.position);
    } finally {
      await other.end();
    }
    expect(await readCheckpoint(db(), withdrawalsProjection.name)).toBe(events.at(-1)!.position);
    expect(await rowCount()).toBe(4);
    expect(await inTransaction()).toBe(false);
  });

  it('leaves no transaction open when the lock itself fails', async () => {
    const events = await withdrawalEvents();
    await db().deleteFrom('projection_checkpoints').execute();
    await expect(applyBatch(projectionSession(client), withdrawalsProjection, events, 0n)).rejects.toThrow(/no checkpoint row/);
    expect(await inTransaction()).toBe(false);
    // a lock that cannot be taken in time fails in the opening itself
    await readCheckpoint(db(), withdrawalsProjection.name);
    await client.query("set lock_timeout = '50ms'");
    const holder = await database.pool.connect();
    try {
      await holder.query("begin; select 1 from projection_checkpoints where name = 'withdrawals' for update");
      await expect(applyBatch(projectionSession(client), withdrawalsProjection, events, 0n)).rejects.toThrow(/lock timeout/);
      expect(queries.at(-1)).toBe('rollback');
    } finally {
      await holder.query('rollback');
      holder.release();
    }
    expect(await inTransaction()).toBe(false);
    expect(await rowCount()).toBe(0);
  });
});
