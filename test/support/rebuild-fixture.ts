import { sql, type Kysely } from 'kysely';
import { expect } from 'vitest';
import { withdrawalLifecycles } from '../../bench/lib/withdrawal-lifecycles.js';
import { nativeToken } from '../../src/catalog/tokens.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { eventStoreMigrations } from '../../src/eventstore/postgres/migrations/index.js';
import { createPostgresEventStore } from '../../src/eventstore/postgres/postgres-event-store.js';
import type { EventStore } from '../../src/eventstore/port.js';
import { createLogger } from '../../src/log.js';
import { readModelMigrations } from '../../src/projections/migrations/index.js';
import type { Projection } from '../../src/projections/projection.js';
import { ProjectionRunner } from '../../src/projections/runner.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { tableHash } from './stream-totals-projection.js';

/** What a rebuild test compares: its projections' tables, the counts kept by triggers and the outbox (without what is random or the database's clock). */
export interface ReadModelSnapshot {
  tables: string[];
  statusCounts: { status: string; count: string }[];
  webhooks: { dedupe_key: string; event_type: string; body: unknown }[];
}

/**
 * An event store filled with withdrawal lifecycles (six events each, shaped as the application
 * appends them) for the rebuild tests, and the read models they rebuild: each test makes its own
 * and compares it with a reference that never saw a rebuild.
 */
export interface RebuildFixture {
  store: EventStore;
  logger: ReturnType<typeof createLogger>;
  /** appends the next `count` lifecycles */
  appendLifecycles(count: number): Promise<void>;
  /** a new database with the read models' tables */
  readModel(label: string): Promise<{ database: TestDatabase; db: Kysely<Database> }>;
  snapshot(db: Kysely<Database>): Promise<ReadModelSnapshot>;
  /** a read model that never saw a rebuild, each projection caught up to the head */
  reference(): Promise<ReadModelSnapshot>;
  /** the temporary tables left in the database (a rebuild leaves none) */
  temporaryTables(db: Kysely<Database>): Promise<number>;
  close(): Promise<void>;
}

export const openRebuildFixture = async (label: string, projections: readonly Projection[], options: { orgIds: string[]; lifecycles: number }): Promise<RebuildFixture> => {
  const logger = createLogger('silent');
  const token = nativeToken('eip155:1');
  const generator = withdrawalLifecycles({ orgIds: options.orgIds, tokenId: token.id, chainId: token.chainId, start: new Date('2026-11-22T10:00:00Z') });
  const eventsDatabase = await createTestDatabase(`${label}_events`);
  await migrateToLatest(eventsDatabase.pool, eventStoreMigrations);
  const store = createPostgresEventStore({ pool: eventsDatabase.pool, listenConfig: eventsDatabase.config, logger });
  const readModels: TestDatabase[] = [];
  let appended = 0;

  const appendLifecycles = async (count: number) => {
    for (const end = appended + count; appended < end; ) for (const step of generator.lifecycle(appended++)) await store.appendMany(step);
  };

  const readModel = async (name: string) => {
    const database = await createTestDatabase(name);
    readModels.push(database);
    await migrateToLatest(database.pool, readModelMigrations);
    return { database, db: createDatabase(database.pool) };
  };

  const snapshot = async (db: Kysely<Database>): Promise<ReadModelSnapshot> => ({
    tables: await Promise.all(projections.flatMap((projection) => projection.tables).map((table) => tableHash(db, table))),
    statusCounts: (await sql<{ status: string; count: string }>`select status, count::text from withdrawal_status_counts order by status`.execute(db)).rows,
    webhooks: await db.selectFrom('webhook_deliveries').select(['dedupe_key', 'event_type', 'body']).orderBy('dedupe_key').execute(),
  });

  await appendLifecycles(options.lifecycles);
  return {
    store,
    logger,
    appendLifecycles,
    readModel,
    snapshot,
    reference: async () => {
      const { database, db } = await readModel(`${label}_reference`);
      for (const projection of projections) expect(await new ProjectionRunner({ projection, store, database: database.config, logger }).catchUp()).toBe(true);
      return snapshot(db);
    },
    temporaryTables: async (db) => {
      const { rows } = await sql<{ count: string }>`select count(*)::text as count from pg_class where relpersistence = 't' and relkind = 'r'`.execute(db);
      return Number(rows[0]!.count);
    },
    close: async () => {
      await store.close();
      await Promise.all([eventsDatabase, ...readModels].map((database) => database.drop()));
    },
  };
};
