import { afterEach, describe, expect, it } from 'vitest';
import { devnetMigrations } from '../../src/chains/devnet/migrations/index.js';
import { migrateToLatest, type MigrationSet } from '../../src/db/migrate.js';
import { migrateServiceTables } from '../../src/infrastructure.js';
import { chainWatcherMigrations } from '../../src/processes/deposit-watcher/migrations/index.js';
import { readModelMigrations } from '../../src/projections/migrations/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/** read models' migrations that came after the move, and the sweepers' set they go with */
const LANDED_SINCE = ['20261125T1700-sweep-queue-closed-by-events', '20261126T1400-deposits-by-address', '20261127T0200-webhook-deliveries-seq-by-identity', '20261127T0500-webhook-deliveries-due-by-organization', '20261127T0800-webhook-deliveries-one-due-index', '20261127T1100-webhook-deliveries-lease-off-index', '20261127T1400-webhook-attempts-without-delivery-key', '20261127T1700-webhook-deliveries-lists-by-status', '20261127T2000-webhook-deliveries-deduped-by-id', '20261127T2210-withdrawals-seq-without-unique-index', '20261127T2230-deposits-seq-without-unique-index', '20261128T0500-webhook-attempts-keyed-by-delivery'];
const SWEEPER_MIGRATIONS = ['20261125T1700-sweep-attempts'];
/** the deposit watchers' migrations that came after the move (their checkpoints) */
const WATCHER_MIGRATIONS_SINCE = ['20261126T0700-watcher-checkpoints'];
const WATCHER_MIGRATIONS = ['20261122T1900-chain-watchers', ...WATCHER_MIGRATIONS_SINCE];
/** the devnet's migrations that came after the move (its running totals) */
const DEVNET_MIGRATIONS_SINCE = ['20261126T1700-devnet-running-totals'];
const DEVNET_MIGRATIONS = ['20261122T1300-devnet', ...DEVNET_MIGRATIONS_SINCE];
/** the withdrawal processors' set (their checkpoints) */
const PROCESSOR_MIGRATIONS = ['20261126T0700-withdrawal-processor-checkpoints'];

/** The read models' set as it was before the devnet's and the watchers' tables got sets of their own. */
const readModelsBeforeTheMove: MigrationSet = {
  schema: 'public',
  migrations: Object.fromEntries(
    Object.entries({ ...readModelMigrations.migrations, ...devnetMigrations.migrations, ...chainWatcherMigrations.migrations })
      .filter(([name]) => !LANDED_SINCE.includes(name) && !WATCHER_MIGRATIONS_SINCE.includes(name) && !DEVNET_MIGRATIONS_SINCE.includes(name))
      .sort(([a], [b]) => a.localeCompare(b)),
  ),
};

const recorded = async (database: TestDatabase, table: string) =>
  (await database.pool.query<{ name: string }>(`select name from public.${table} order by name`)).rows.map((row) => row.name);

/** Each owner's tables migrate in a set of its own: the devnet's, the deposit watchers', the read models'. */
describe('migration sets per owner', () => {
  let database: TestDatabase;
  afterEach(async () => database?.drop());

  it('a new database gets every table, each set recording its own migrations', async () => {
    database = await createTestDatabase('sets_new');
    await migrateServiceTables(database.pool);
    expect(await recorded(database, 'devnet_migration')).toEqual(DEVNET_MIGRATIONS);
    expect(await recorded(database, 'chain_watcher_migration')).toEqual(WATCHER_MIGRATIONS);
    expect(await recorded(database, 'sweeper_migration')).toEqual(SWEEPER_MIGRATIONS);
    expect(await recorded(database, 'withdrawal_processor_migration')).toEqual(PROCESSOR_MIGRATIONS);
    expect(await recorded(database, 'kysely_migration')).toEqual(Object.keys(readModelMigrations.migrations).sort());
    // a second start applies nothing
    expect(await migrateServiceTables(database.pool)).toEqual([]);
  });

  it('a database migrated before the move keeps its tables and rows, and runs nothing twice', async () => {
    database = await createTestDatabase('sets_old');
    await migrateToLatest(database.pool, readModelsBeforeTheMove);
    await database.pool.query(`insert into chain_watcher_cursors (chain_id, next_block, updated_at) values ('eip155:1', 42, now())`);

    // two processes starting at once on the upgraded code
    const applied = await Promise.all([migrateServiceTables(database.pool), migrateServiceTables(database.pool)]);

    // only what landed since: once, in one process or the other
    expect(applied.flat().sort()).toEqual([...LANDED_SINCE, ...SWEEPER_MIGRATIONS, ...WATCHER_MIGRATIONS_SINCE, ...DEVNET_MIGRATIONS_SINCE, ...PROCESSOR_MIGRATIONS].sort());
    expect(await recorded(database, 'devnet_migration')).toEqual(DEVNET_MIGRATIONS);
    expect(await recorded(database, 'chain_watcher_migration')).toEqual(WATCHER_MIGRATIONS);
    expect(await recorded(database, 'kysely_migration')).toEqual(Object.keys(readModelMigrations.migrations).sort());
    expect((await database.pool.query('select next_block from chain_watcher_cursors')).rows).toEqual([{ next_block: '42' }]);
  });

  it('an upgrade hands the sweeper\'s schedules over from sweep_queue to sweep_attempts, and keeps the queue\'s rows', async () => {
    database = await createTestDatabase('sets_sweeps');
    await migrateToLatest(database.pool, readModelsBeforeTheMove);
    await database.pool.query(`insert into sweep_queue (chain_id, tx_hash, output_index, seq, queued_at, next_attempt_at, attempts, done_at) values
      ('eip155:1', '0xa1', 0, 1, '2026-11-24T10:00:00Z', '2026-11-24T10:00:00Z', 0, null),
      ('eip155:1', '0xa2', 0, 2, '2026-11-24T10:00:00Z', '2026-11-24T10:05:00Z', 3, null),
      ('eip155:1', '0xa3', 0, 3, '2026-11-24T10:00:00Z', '2026-11-24T10:00:30Z', 0, null),
      ('eip155:1', '0xa4', 0, 4, '2026-11-24T10:00:00Z', '2026-11-24T10:00:00Z', 0, '2026-11-24T10:01:00Z')`);

    await migrateServiceTables(database.pool);

    const queue = await database.pool.query('select tx_hash, done_at from sweep_queue order by seq');
    expect(queue.rows.map((row) => [row.tx_hash, row.done_at?.toISOString() ?? null])).toEqual([
      ['0xa1', null],
      ['0xa2', null],
      ['0xa3', null],
      ['0xa4', '2026-11-24T10:01:00.000Z'],
    ]);
    expect(queue.fields.map((field) => field.name)).toEqual(['tx_hash', 'done_at']);
    const attempts = await database.pool.query('select tx_hash, attempts, next_attempt_at, done_at from sweep_attempts order by tx_hash');
    expect(attempts.rows).toEqual([
      { tx_hash: '0xa2', attempts: 3, next_attempt_at: new Date('2026-11-24T10:05:00Z'), done_at: null },
      { tx_hash: '0xa3', attempts: 0, next_attempt_at: new Date('2026-11-24T10:00:30Z'), done_at: null },
    ]);
    const columns = await database.pool.query(`select column_name from information_schema.columns where table_name = 'sweep_queue' order by ordinal_position`);
    expect(columns.rows.map((row) => row.column_name)).toEqual(['chain_id', 'tx_hash', 'output_index', 'seq', 'queued_at', 'done_at']);
  });
});
