import type pg from 'pg';
import type { Config } from './config/env.js';
import { createDatabase } from './db/database.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './db/embedded-postgres.js';
import { migrateToLatest } from './db/migrate.js';
import { createPool, type PoolTarget } from './db/pool.js';
import { eventStoreMigrations } from './eventstore/postgres/migrations/index.js';
import { createPostgresEventStore } from './eventstore/postgres/postgres-event-store.js';
import type { EventStore } from './eventstore/port.js';
import type { Logger } from './log.js';
import { readModelMigrations } from './projections/migrations/index.js';

/** The stores every entry point (server, CLI) works with, opened and closed in one place. */
export interface Infrastructure {
  databaseTarget: PoolTarget;
  pool: pg.Pool;
  db: ReturnType<typeof createDatabase>;
  store: EventStore;
  eventStoreKind: 'postgres' | 'kurrentdb';
  health(): Promise<Record<string, boolean>>;
  close(): Promise<void>;
}

const openEventStore = async (config: Config, pool: pg.Pool, target: PoolTarget, logger: Logger) => {
  if (config.EVENTSTORE_URL) {
    const { createKurrentDbEventStore } = await import('./eventstore/kurrentdb/kurrentdb-event-store.js');
    return { store: createKurrentDbEventStore(config.EVENTSTORE_URL), kind: 'kurrentdb' as const };
  }
  await migrateToLatest(pool, eventStoreMigrations);
  return { store: createPostgresEventStore({ pool, listenConfig: target, logger }), kind: 'postgres' as const };
};

export const openInfrastructure = async (config: Config, logger: Logger, purpose: string): Promise<Infrastructure> => {
  let embedded: EmbeddedPostgres | null = null;
  let target: PoolTarget;
  if (config.DATABASE_URL) {
    target = { connectionString: config.DATABASE_URL };
  } else {
    embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, logger });
    target = embedded.connection('ledgergate');
  }
  const pool = createPool(target, { max: config.DATABASE_POOL_SIZE, purpose });
  try {
    const { store, kind } = await openEventStore(config, pool, target, logger);
    const applied = await migrateToLatest(pool, readModelMigrations);
    if (applied.length > 0) logger.info('read models migrated', { applied });
    return {
      databaseTarget: target,
      pool,
      db: createDatabase(pool),
      store,
      eventStoreKind: kind,
      health: async () => {
        const [eventStore, readModels] = await Promise.all([
          store.ping(),
          pool.query('select 1').then(
            () => true,
            () => false,
          ),
        ]);
        return { eventStore, readModels };
      },
      close: async () => {
        await store.close().catch((error: unknown) => logger.warn('closing the event store failed', { error }));
        await pool.end().catch(() => undefined);
        await embedded?.stop();
      },
    };
  } catch (error) {
    await pool.end().catch(() => undefined);
    await embedded?.stop().catch(() => undefined);
    throw error;
  }
};
