import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withdrawalLifecycles } from '../../bench/lib/withdrawal-lifecycles.js';
import { nativeToken } from '../../src/catalog/tokens.js';
import { createDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { eventStoreMigrations } from '../../src/eventstore/postgres/migrations/index.js';
import { createPostgresEventStore } from '../../src/eventstore/postgres/postgres-event-store.js';
import type { EventStore } from '../../src/eventstore/port.js';
import { createLogger } from '../../src/log.js';
import { readCheckpoint } from '../../src/projections/checkpoint.js';
import { readModelMigrations } from '../../src/projections/migrations/index.js';
import { ProjectionRunner } from '../../src/projections/runner.js';
import { withdrawalsProjection } from '../../src/projections/withdrawals.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

const logger = createLogger('silent');
const token = nativeToken('eip155:1');

/**
 * A SIGTERM while the service starts on a long history reaches the projections' catch-up as an
 * aborted signal: the catch-up ends between two batches, each applied batch committed with its
 * checkpoint, and the next start goes on from there.
 */
describe('projection catch-up asked to stop', () => {
  let database: TestDatabase;
  let store: EventStore;

  beforeAll(async () => {
    database = await createTestDatabase('catch_up_stop');
    await migrateToLatest(database.pool, eventStoreMigrations);
    await migrateToLatest(database.pool, readModelMigrations);
    store = createPostgresEventStore({ pool: database.pool, listenConfig: database.config, logger });
    const generator = withdrawalLifecycles({ orgIds: ['org_stopA', 'org_stopB'], tokenId: token.id, chainId: token.chainId, start: new Date('2026-11-26T10:00:00Z') });
    for (let index = 0; index < 10; index++) for (const step of generator.lifecycle(index)) await store.appendMany(step);
  });
  afterAll(async () => {
    await store.close();
    await database.drop();
  });

  it('ends between two batches with its checkpoint at the last applied one, and a later catch-up reaches the head', async () => {
    const db = createDatabase(database.pool);
    const head = await store.headPosition();
    const stopping = new AbortController();
    const positionsRead: bigint[] = [];
    // the stop arrives while the second batch is read: that batch is still applied, no third is read
    const storeStoppedOnSecondRead = new Proxy(store, {
      get(target, property, receiver) {
        if (property !== 'readAll') return Reflect.get(target, property, receiver);
        return async (...args: Parameters<EventStore['readAll']>) => {
          const batch = await target.readAll(...args);
          positionsRead.push(batch.at(-1)?.position ?? -1n);
          if (positionsRead.length === 2) stopping.abort();
          return batch;
        };
      },
    });
    const runner = new ProjectionRunner({ projection: withdrawalsProjection, store: storeStoppedOnSecondRead, database: database.config, logger, batchSize: 5 });

    expect(await runner.catchUp(stopping.signal)).toBe(true);

    expect(positionsRead).toHaveLength(2);
    const stoppedAt = await readCheckpoint(db, withdrawalsProjection.name);
    expect(stoppedAt).toBe(positionsRead[1]);
    expect(stoppedAt).toBeLessThan(head);

    const again = new ProjectionRunner({ projection: withdrawalsProjection, store, database: database.config, logger, batchSize: 5 });
    expect(await again.catchUp()).toBe(true);
    expect(await readCheckpoint(db, withdrawalsProjection.name)).toBe(await lastWithdrawalPosition(store));
  });
});

const lastWithdrawalPosition = async (store: EventStore): Promise<bigint> => {
  const events = await store.readAll({ afterPosition: 0n, maxCount: 100_000, filter: withdrawalsProjection.filter });
  return events.at(-1)!.position;
};
