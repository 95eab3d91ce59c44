import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { eventStoreMigrations } from '../../src/eventstore/postgres/migrations/index.js';
import { createPostgresEventStore } from '../../src/eventstore/postgres/postgres-event-store.js';
import type { EventStore } from '../../src/eventstore/port.js';
import { createLogger } from '../../src/log.js';
import { accountsProjection } from '../../src/projections/accounts.js';
import { auditStreamsProjection } from '../../src/projections/audit-streams.js';
import { rebuildProjections } from '../../src/projections/checkpoint.js';
import { depositsProjection } from '../../src/projections/deposits.js';
import { readModelMigrations } from '../../src/projections/migrations/index.js';
import type { Projection, BatchMemory } from '../../src/projections/projection.js';
import { ProjectionRunner } from '../../src/projections/runner.js';
import { sweepQueueProjection } from '../../src/projections/sweep-queue.js';
import { sweepsProjection } from '../../src/projections/sweeps.js';
import { withdrawalsProjection } from '../../src/projections/withdrawals.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { appendDepositScenario } from '../support/deposit-scenario.js';
import { openRebuildFixture, type RebuildFixture } from '../support/rebuild-fixture.js';

const logger = createLogger('silent');

/** the projection, noting the memory each of its batches is given */
const noting = (projection: Projection, memories: Set<BatchMemory | undefined>): Projection => ({
  ...projection,
  handleBatch: (trx, events, outbox, memory) => {
    memories.add(memory);
    return projection.handleBatch!(trx, events, outbox, memory);
  },
});

/**
 * A rebuild remembers what it wrote to its copies of the tables (withdrawal states, sweep rows, the
 * audit streams) instead of reading it back each batch. In batches small enough that a withdrawal's
 * or a sweep's events span several, its tables still equal the live projection's, whether it
 * builds beside caught-up tables or on an empty read model (all of it then in the swap's
 * transaction), and each of its batches gets the same memory.
 */
describe('projection rebuild, what it remembers between batches', () => {
  describe('withdrawals and audit streams', () => {
    const PROJECTIONS = [withdrawalsProjection, auditStreamsProjection];
    let fixture: RebuildFixture;

    beforeAll(async () => {
      fixture = await openRebuildFixture('rebuild_memory', PROJECTIONS, { orgIds: ['org_memoryA', 'org_memoryB'], lifecycles: 12 });
    });
    afterAll(async () => {
      await fixture.close();
    });

    it('gives the live tables in batches of 1 to 5, beside caught-up tables and on an empty read model', async () => {
      const reference = await fixture.reference();
      for (const batchSize of [1, 2, 5]) {
        const { database, db } = await fixture.readModel(`rebuild_memory_caught_up_${batchSize}`);
        for (const projection of PROJECTIONS) await new ProjectionRunner({ projection, store: fixture.store, database: database.config, logger }).catchUp();
        const memories = PROJECTIONS.map(() => new Set<BatchMemory | undefined>());
        await rebuildProjections(db, fixture.store, PROJECTIONS.map((projection, index) => noting(projection, memories[index]!)), { sessions: 2, batchSize });
        expect(await fixture.snapshot(db)).toEqual(reference);
        for (const seen of memories) expect([...seen].map((memory) => memory !== undefined)).toEqual([true]);

        const empty = await fixture.readModel(`rebuild_memory_empty_${batchSize}`);
        await rebuildProjections(empty.db, fixture.store, PROJECTIONS, { batchSize });
        expect(await fixture.snapshot(empty.db)).toEqual(reference);
      }
    });
  });

  describe('sweeps', () => {
    const PROJECTIONS = [accountsProjection, depositsProjection, sweepQueueProjection, sweepsProjection];
    let eventsDatabase: TestDatabase;
    let store: EventStore;
    const readModels: TestDatabase[] = [];

    const readModel = async (name: string) => {
      const database = await createTestDatabase(name);
      readModels.push(database);
      await migrateToLatest(database.pool, readModelMigrations);
      return database;
    };
    const snapshot = async (db: Kysely<Database>) => ({
      sweeps: await db.selectFrom('sweeps').selectAll().orderBy('chain_id').orderBy('tx_hash').orderBy('output_index').execute(),
      webhooks: await db.selectFrom('webhook_deliveries').select(['org_id', 'event_type', 'dedupe_key', 'body']).orderBy('dedupe_key').execute(),
    });

    beforeAll(async () => {
      eventsDatabase = await createTestDatabase('rebuild_memory_sweep_events');
      await migrateToLatest(eventsDatabase.pool, eventStoreMigrations);
      store = createPostgresEventStore({ pool: eventsDatabase.pool, listenConfig: eventsDatabase.config, logger });
      await appendDepositScenario(store);
    });
    afterAll(async () => {
      await store.close();
      await Promise.all([eventsDatabase, ...readModels].map((database) => database.drop()));
    });

    it('gives the live tables in batches of 1 to 3, beside caught-up tables and on an empty read model', async () => {
      const live = await readModel('rebuild_memory_sweeps_live');
      for (const projection of PROJECTIONS) expect(await new ProjectionRunner({ projection, store, database: live.config, logger }).catchUp()).toBe(true);
      const reference = await snapshot(createDatabase(live.pool));
      expect(reference.sweeps.length).toBeGreaterThan(0);
      for (const batchSize of [1, 2, 3]) {
        const caughtUp = await readModel(`rebuild_memory_sweeps_caught_up_${batchSize}`);
        for (const projection of PROJECTIONS) await new ProjectionRunner({ projection, store, database: caughtUp.config, logger }).catchUp();
        const memories = new Set<BatchMemory | undefined>();
        const projections = PROJECTIONS.map((projection) => (projection === sweepsProjection ? noting(projection, memories) : projection));
        await rebuildProjections(createDatabase(caughtUp.pool), store, projections, { sessions: 2, batchSize });
        expect(await snapshot(createDatabase(caughtUp.pool))).toEqual(reference);
        expect([...memories].map((memory) => memory !== undefined)).toEqual([true]);

        const empty = createDatabase((await readModel(`rebuild_memory_sweeps_empty_${batchSize}`)).pool);
        await rebuildProjections(empty, store, PROJECTIONS, { batchSize });
        expect(await snapshot(empty)).toEqual(reference);
      }
    });
  });
});
