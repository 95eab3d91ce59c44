import type pg from 'pg';
import { loadSignerMnemonic } from './chains/signer/mnemonic.js';
import { createSigner, type Signer } from './chains/signer/signer.js';
import type { Config } from './config/env.js';
import { createDatabase } from './db/database.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './db/embedded-postgres.js';
import { migrateToLatest } from './db/migrate.js';
import { createPool, type PoolTarget } from './db/pool.js';
import { poolHealth, type PoolHealth } from './db/pool-health.js';
import { eventStoreMigrations } from './eventstore/postgres/migrations/index.js';
import { createPostgresEventStore } from './eventstore/postgres/postgres-event-store.js';
import { analyzeEventsWithoutStatistics } from './eventstore/postgres/statistics.js';
import type { EventStore } from './eventstore/port.js';
import type { Logger } from './log.js';
import { observePool } from './observability/metrics.js';
import { readModelMigrations } from './projections/migrations/index.js';
import { devnetMigrations } from './chains/devnet/migrations/index.js';
import { chainWatcherMigrations } from './processes/deposit-watcher/migrations/index.js';
import { sweeperMigrations } from './processes/sweeper/migrations/index.js';
import { withdrawalProcessorMigrations } from './processes/withdrawal-processor/migrations/index.js';
import { loadKeyring, type Keyring } from './security/keyring.js';

/** One role's connections to the database, and the event store reading on them. */
export interface RoleConnections {
  pool: pg.Pool;
  db: ReturnType<typeof createDatabase>;
  store: EventStore;
}

/**
 * The stores and keys every entry point (server, CLI, tests) works with, opened and closed in one place.
 * `pool`, `db` and `store` are the request path's (and the CLI's); `roles` holds the background's own
 * pools, so a request never waits in their queue, nor they in its.
 */
export interface Infrastructure extends RoleConnections {
  databaseTarget: PoolTarget;
  roles: {
    /** the projections' reads and the webhook dispatcher (DATABASE_READ_SIDE_POOL_SIZE) */
    readSide: RoleConnections;
    /** deposit watchers, sweepers, withdrawal processors and the devnet (DATABASE_WORKERS_POOL_SIZE) */
    workers: RoleConnections;
  };
  eventStoreKind: 'postgres' | 'kurrentdb';
  keyring: Keyring;
  /** the only holder of private keys; null in production without LEDGERGATE_SIGNER_MNEMONIC (no chain can run) */
  signer: Signer | null;
  health(): Promise<Record<string, boolean>>;
  close(): Promise<void>;
}

/**
 * The service's own tables, each owner's set in turn (the event store's is migrated with the store).
 * The sets that moved out of the read models' go first: their bookkeeping rows must leave its table
 * before its migrator checks that every migration it recorded is still in the set. The sweepers'
 * too: it takes over retry schedules from `sweep_queue` columns the read models' set then drops.
 */
export const SERVICE_MIGRATION_SETS = [devnetMigrations, chainWatcherMigrations, sweeperMigrations, withdrawalProcessorMigrations, readModelMigrations] as const;

export const migrateServiceTables = async (pool: pg.Pool): Promise<string[]> => {
  const applied: string[] = [];
  for (const set of SERVICE_MIGRATION_SETS) applied.push(...(await migrateToLatest(pool, set)));
  return applied;
};

const openEventStore = async (config: Config, pool: pg.Pool, target: PoolTarget, logger: Logger) => {
  if (config.EVENTSTORE_URL) {
    const { createKurrentDbEventStore } = await import('./eventstore/kurrentdb/kurrentdb-event-store.js');
    const store = createKurrentDbEventStore(config.EVENTSTORE_URL);
    // KurrentDB reads over its own client: every role shares it
    return { store, kind: 'kurrentdb' as const, readingOn: (): EventStore => store };
  }
  await migrateToLatest(pool, eventStoreMigrations);
  await analyzeEventsWithoutStatistics(pool);
  const store = createPostgresEventStore({ pool, listenConfig: target, logger });
  return { store, kind: 'postgres' as const, readingOn: (rolePool: pg.Pool): EventStore => store.readingOn(rolePool) };
};


/** Connects to a PostgreSQL (read models, and events unless EVENTSTORE_URL), migrating it first. */
export const connectInfrastructure = async (
  target: PoolTarget,
  config: Config,
  logger: Logger,
  purpose: string,
  onClose: () => Promise<unknown> = async () => undefined,
): Promise<Infrastructure> => {
  const pool = createPool(target, { max: config.DATABASE_POOL_SIZE, purpose });
  const readSidePool = createPool(target, { max: config.DATABASE_READ_SIDE_POOL_SIZE, purpose: `${purpose}:read-side` });
  const workersPool = createPool(target, { max: config.DATABASE_WORKERS_POOL_SIZE, purpose: `${purpose}:workers` });
  const pools = [pool, readSidePool, workersPool];
  // each pool answers /healthz without queueing behind its work (pool-health.ts), from its first checkout on
  const [requestsHealth, readSideHealth, workersHealth] = pools.map((each) => poolHealth(each)) as [PoolHealth, PoolHealth, PoolHealth];
  observePool('requests', pool);
  observePool('read-side', readSidePool);
  observePool('workers', workersPool);
  const endPools = () => Promise.all(pools.map((each) => each.end().catch(() => undefined)));
  try {
    const keyring = await loadKeyring({ secretKey: config.LEDGERGATE_SECRET_KEY, auditKey: config.LEDGERGATE_AUDIT_KEY, dataDir: config.dataDir, isProduction: config.isProduction });
    const mnemonic = await loadSignerMnemonic({ mnemonic: config.LEDGERGATE_SIGNER_MNEMONIC, dataDir: config.dataDir, isProduction: config.isProduction });
    const { store, kind, readingOn } = await openEventStore(config, pool, target, logger);
    const role = (rolePool: pg.Pool): RoleConnections => ({ pool: rolePool, db: createDatabase(rolePool), store: readingOn(rolePool) });
    const applied = await migrateServiceTables(pool);
    if (applied.length > 0) logger.info('read models migrated', { applied });
    let closing: Promise<void> | null = null;
    const closeOnce = async () => {
      await store.close().catch((error: unknown) => logger.warn('closing the event store failed', { error }));
      await endPools();
      await onClose();
    };
    return {
      databaseTarget: target,
      pool,
      db: createDatabase(pool),
      store,
      roles: { readSide: role(readSidePool), workers: role(workersPool) },
      eventStoreKind: kind,
      keyring,
      signer: mnemonic === null ? null : createSigner(mnemonic),
      /** each store, and each role's pool, answers */
      health: async () => {
        const [eventStore, readModels, readSidePoolAnswers, workersPoolAnswers] = await Promise.all([
          store.ping(),
          requestsHealth.answers(),
          readSideHealth.answers(),
          workersHealth.answers(),
        ]);
        return { eventStore, readModels, readSidePool: readSidePoolAnswers, workersPool: workersPoolAnswers };
      },
      /** the event store, then every pool, then `onClose`; a second call waits for the first */
      close: () => (closing ??= closeOnce()),
    };
  } catch (error) {
    await endPools();
    await onClose().catch(() => undefined);
    throw error;
  }
};

/** DATABASE_URL, or the embedded PostgreSQL under DATA_DIR (started, or adopted if running). */
export const openInfrastructure = async (config: Config, logger: Logger, purpose: string): Promise<Infrastructure> => {
  if (config.DATABASE_URL) return connectInfrastructure({ connectionString: config.DATABASE_URL }, config, logger, purpose);
  const embedded: EmbeddedPostgres = await startEmbeddedPostgres({ dataDir: config.dataDir, logger });
  if (embedded.created && purpose === 'cli') {
    // an operator who runs a command without the server's DATA_DIR would otherwise write to a
    // database nobody serves, and wonder why the server refuses the API key it printed
    logger.warn(`created a new, empty database under ${config.dataDir}: a server started with another DATA_DIR or a DATABASE_URL does not see it`, { dataDir: config.dataDir });
  }
  return connectInfrastructure(embedded.connection('ledgergate'), config, logger, purpose, () => embedded.stop());
};
