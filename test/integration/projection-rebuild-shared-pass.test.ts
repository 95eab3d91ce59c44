import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withdrawalLifecycles } from '../../bench/lib/withdrawal-lifecycles.js';
import { nativeToken } from '../../src/catalog/tokens.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { eventStoreMigrations } from '../../src/eventstore/postgres/migrations/index.js';
import { createPostgresEventStore } from '../../src/eventstore/postgres/postgres-event-store.js';
import type { EventStore } from '../../src/eventstore/port.js';
import { createLogger } from '../../src/log.js';
import { auditStreamsProjection } from '../../src/projections/audit-streams.js';
import { balancesProjection } from '../../src/projections/balances.js';
import { readCheckpoint, rebuildProjections } from '../../src/projections/checkpoint.js';
import { readModelMigrations } from '../../src/projections/migrations/index.js';
import { applyEvents, type Projection } from '../../src/projections/projection.js';
import { ProjectionRunner } from '../../src/projections/runner.js';
import { withdrawalsProjection } from '../../src/projections/withdrawals.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { tableHash } from '../support/stream-totals-projection.js';

const logger = createLogger('silent');
const PROJECTIONS = [withdrawalsProjection, balancesProjection, auditStreamsProjection];
const token = nativeToken('eip155:1');

/**
 * Several projections rebuilt together: one read pass feeds each its own events (two of them share
 * a session here). Raced with the live runners and stopped between steps, every projection ends
 * with every row and webhook once, and gets exactly its events, in order, once.
 */
describe('projection rebuild, one read pass for several projections', () => {
  let eventsDatabase: TestDatabase;
  let store: EventStore;
  const readModels: TestDatabase[] = [];
  const generator = withdrawalLifecycles({ orgIds: ['org_passA', 'org_passB'], tokenId: token.id, chainId: token.chainId, start: new Date('2026-11-22T10:00:00Z') });
  let appended = 0;

  const appendLifecycles = async (count: number) => {
    for (const end = appended + count; appended < end; ) for (const step of generator.lifecycle(appended++)) await store.appendMany(step);
  };

  const readModel = async (label: string) => {
    const database = await createTestDatabase(label);
    readModels.push(database);
    await migrateToLatest(database.pool, readModelMigrations);
    return { database, db: createDatabase(database.pool) };
  };

  const snapshot = async (db: Kysely<Database>) => ({
    tables: await Promise.all(PROJECTIONS.flatMap((projection) => projection.tables).map((table) => tableHash(db, table))),
    webhooks: await db.selectFrom('webhook_deliveries').select(['dedupe_key', 'event_type', 'body']).orderBy('dedupe_key').execute(),
  });

  const reference = async () => {
    const { database, db } = await readModel('shared_pass_reference');
    for (const projection of PROJECTIONS) expect(await new ProjectionRunner({ projection, store, database: database.config, logger }).catchUp()).toBe(true);
    return snapshot(db);
  };

  const positionsOf = async (projection: Projection, upTo: bigint) =>
    (await store.readAll({ filter: projection.filter, maxCount: 10_000 })).map((event) => event.position).filter((position) => position <= upTo);

  const waitForHeads = async (db: Kysely<Database>) => {
    const head = await store.headPosition();
    for (const projection of PROJECTIONS) {
      const last = (await positionsOf(projection, head)).at(-1)!;
      while ((await readCheckpoint(db, projection.name)) < last) await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };

  const temporaryTables = async (db: Kysely<Database>) => {
    const { rows } = await sql<{ count: string }>`select count(*)::text as count from pg_class where relpersistence = 't' and relkind = 'r'`.execute(db);
    return Number(rows[0]!.count);
  };

  /** the projection as the rebuild runs it, noting the position of every event it applies */
  const recording = (projection: Projection, applied: bigint[]): Projection => ({
    ...projection,
    handleBatch: (trx, events, outbox) => {
      applied.push(...events.map((event) => event.position));
      return applyEvents(trx, projection, events, outbox);
    },
  });

  beforeAll(async () => {
    eventsDatabase = await createTestDatabase('shared_pass_events');
    await migrateToLatest(eventsDatabase.pool, eventStoreMigrations);
    store = createPostgresEventStore({ pool: eventsDatabase.pool, listenConfig: eventsDatabase.config, logger });
    await appendLifecycles(20);
  });
  afterAll(async () => {
    await store.close();
    await Promise.all([eventsDatabase, ...readModels].map((database) => database.drop()));
  });

  it('gives each projection exactly its events in order, once, while the live runners apply events the pass also reads', async () => {
    const { database, db } = await readModel('shared_pass_live');
    const runners = PROJECTIONS.map((projection) => new ProjectionRunner({ projection, store, database: database.config, logger, batchSize: 7 }));
    for (const runner of runners) runner.start();
    await waitForHeads(db);

    const applied = PROJECTIONS.map((): bigint[] => []);
    let raced = false;
    const positions = await rebuildProjections(
      db,
      store,
      PROJECTIONS.map((projection, index) => recording(projection, applied[index]!)),
      {
        sessions: 2,
        onProgress: async () => {
          if (raced) return;
          raced = true;
          // after the pass's first batch, before any swap: new events, applied live with their webhooks
          await appendLifecycles(6);
          await waitForHeads(db);
        },
      },
    );
    expect(raced).toBe(true);
    for (const [index, projection] of PROJECTIONS.entries()) {
      expect(applied[index]).toEqual(await positionsOf(projection, positions.get(projection.name)!));
    }

    await appendLifecycles(3);
    await waitForHeads(db);
    for (const runner of runners) await runner.stop();
    expect(await snapshot(db)).toEqual(await reference());
    expect(await temporaryTables(db)).toBe(0);
  });

  it('changes nothing when it stops between two steps, and a rebuild after it gives the same tables', async () => {
    const { database, db } = await readModel('shared_pass_stopped');
    for (const projection of PROJECTIONS) await new ProjectionRunner({ projection, store, database: database.config, logger }).catchUp();
    // events beyond the checkpoints: a swap's transaction also writes their webhooks
    await appendLifecycles(4);
    const before = await snapshot(db);
    const checkpoints = await Promise.all(PROJECTIONS.map((projection) => readCheckpoint(db, projection.name)));

    // stopped after the pass's first batch, then after its second (another session's)
    for (const stopAt of [1, 2]) {
      let calls = 0;
      const stopped = rebuildProjections(db, store, PROJECTIONS, {
        sessions: 2,
        onProgress: () => {
          if (++calls === stopAt) throw new Error(`stopped at step ${stopAt}`);
        },
      });
      await expect(stopped).rejects.toThrow(`stopped at step ${stopAt}`);
      expect(await snapshot(db)).toEqual(before);
      expect(await Promise.all(PROJECTIONS.map((each) => readCheckpoint(db, each.name)))).toEqual(checkpoints);
      expect(await temporaryTables(db)).toBe(0);
    }

    await rebuildProjections(db, store, PROJECTIONS, { sessions: 2 });
    expect(await snapshot(db)).toEqual(await reference());
    expect(await temporaryTables(db)).toBe(0);
  });
});
