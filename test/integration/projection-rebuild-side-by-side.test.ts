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
import { balancesProjection } from '../../src/projections/balances.js';
import { readCheckpoint, rebuildProjection } from '../../src/projections/checkpoint.js';
import { readModelMigrations } from '../../src/projections/migrations/index.js';
import type { Projection } from '../../src/projections/projection.js';
import { ProjectionRunner } from '../../src/projections/runner.js';
import { withdrawalsProjection } from '../../src/projections/withdrawals.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { tableHash } from '../support/stream-totals-projection.js';

const logger = createLogger('silent');
const PROJECTIONS = [withdrawalsProjection, balancesProjection];
const token = nativeToken('eip155:1');

/**
 * A rebuild builds its tables side by side and swaps them in at the end. These tests race it with
 * the live runner and stop it between its steps: whatever happens, every row and every webhook is
 * there once, as a read model that never saw a rebuild has them.
 */
describe('projection rebuild, side by side', () => {
  let eventsDatabase: TestDatabase;
  let store: EventStore;
  const readModels: TestDatabase[] = [];
  const generator = withdrawalLifecycles({ orgIds: ['org_sideA', 'org_sideB'], tokenId: token.id, chainId: token.chainId, start: new Date('2026-11-22T10:00:00Z') });
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

  /** the tables and the outbox (without what is random or the database's clock) */
  const snapshot = async (db: Kysely<Database>) => ({
    tables: await Promise.all(PROJECTIONS.flatMap((projection) => projection.tables).map((table) => tableHash(db, table))),
    statusCounts: (await sql<{ status: string; count: string }>`select status, count::text from withdrawal_status_counts order by status`.execute(db)).rows,
    webhooks: await db.selectFrom('webhook_deliveries').select(['dedupe_key', 'event_type', 'body']).orderBy('dedupe_key').execute(),
  });

  /** a read model that never saw a rebuild, caught up to the head */
  const reference = async () => {
    const { database, db } = await readModel('side_by_side_reference');
    for (const projection of PROJECTIONS) expect(await new ProjectionRunner({ projection, store, database: database.config, logger }).catchUp()).toBe(true);
    return snapshot(db);
  };

  const waitForHead = async (db: Kysely<Database>, projection: Projection) => {
    const head = await store.headPosition();
    const last = (await store.readAll({ afterPosition: 0n, filter: projection.filter, maxCount: 10_000 })).filter((event) => event.position <= head).at(-1)!.position;
    while ((await readCheckpoint(db, projection.name)) < last) await new Promise((resolve) => setTimeout(resolve, 5));
  };

  const temporaryTables = async (db: Kysely<Database>) => {
    const { rows } = await sql<{ count: string }>`select count(*)::text as count from pg_class where relpersistence = 't' and relkind = 'r'`.execute(db);
    return Number(rows[0]!.count);
  };

  beforeAll(async () => {
    eventsDatabase = await createTestDatabase('side_by_side_events');
    await migrateToLatest(eventsDatabase.pool, eventStoreMigrations);
    store = createPostgresEventStore({ pool: eventsDatabase.pool, listenConfig: eventsDatabase.config, logger });
    await appendLifecycles(20);
  });
  afterAll(async () => {
    await store.close();
    await Promise.all([eventsDatabase, ...readModels].map((database) => database.drop()));
  });

  it('keeps every row and webhook once while the live runner applies events the rebuild also replays', async () => {
    const { database, db } = await readModel('side_by_side_live');
    const runners = PROJECTIONS.map((projection) => new ProjectionRunner({ projection, store, database: database.config, logger, batchSize: 7 }));
    for (const runner of runners) runner.start();
    for (const projection of PROJECTIONS) await waitForHead(db, projection);

    for (const projection of PROJECTIONS) {
      let raced = false;
      await rebuildProjection(db, store, projection, async () => {
        if (raced) return;
        raced = true;
        // after the rebuild's first batch, before its swap: new events, applied live with their webhooks
        await appendLifecycles(6);
        await waitForHead(db, projection);
      });
      expect(raced).toBe(true);
    }
    await appendLifecycles(3);
    for (const projection of PROJECTIONS) await waitForHead(db, projection);
    for (const runner of runners) await runner.stop();

    expect(await snapshot(db)).toEqual(await reference());
    expect(await temporaryTables(db)).toBe(0);
  });

  it('applies the events beyond the checkpoint with their webhooks, once, when no runner is live', async () => {
    const { database, db } = await readModel('side_by_side_behind');
    for (const projection of PROJECTIONS) await new ProjectionRunner({ projection, store, database: database.config, logger }).catchUp();
    await appendLifecycles(5);
    for (const projection of PROJECTIONS) await rebuildProjection(db, store, projection);

    expect(await snapshot(db)).toEqual(await reference());
    for (const projection of PROJECTIONS) {
      const last = (await store.readAll({ filter: projection.filter, maxCount: 10_000 })).at(-1)!.position;
      expect(await readCheckpoint(db, projection.name)).toBe(last);
    }
  });

  it('changes nothing when it stops between two steps, and a rebuild after it gives the same tables', async () => {
    const { database, db } = await readModel('side_by_side_stopped');
    for (const projection of PROJECTIONS) await new ProjectionRunner({ projection, store, database: database.config, logger }).catchUp();
    // events beyond the checkpoint: the swap's transaction also writes their webhooks
    await appendLifecycles(4);
    const before = await snapshot(db);
    const checkpoints = await Promise.all(PROJECTIONS.map((projection) => readCheckpoint(db, projection.name)));

    for (const projection of PROJECTIONS) {
      // stopped after its first batch (built side by side, committed), and again inside the swap's transaction
      for (const stopAt of [1, 2]) {
        let calls = 0;
        const stopped = rebuildProjection(db, store, projection, () => {
          if (++calls === stopAt) throw new Error(`stopped at step ${stopAt}`);
        });
        await expect(stopped).rejects.toThrow(`stopped at step ${stopAt}`);
        expect(await snapshot(db)).toEqual(before);
        expect(await Promise.all(PROJECTIONS.map((each) => readCheckpoint(db, each.name)))).toEqual(checkpoints);
        expect(await temporaryTables(db)).toBe(0);
      }
    }

    for (const projection of PROJECTIONS) await rebuildProjection(db, store, projection);
    expect(await snapshot(db)).toEqual(await reference());
  });
});
