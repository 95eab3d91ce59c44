import { afterEach, describe, expect, it } from 'vitest';
import { devnetMigrations } from '../../src/chains/devnet/migrations/index.js';
import { migrateToLatest, type MigrationSet } from '../../src/db/migrate.js';
import { migrateServiceTables } from '../../src/infrastructure.js';
import { chainWatcherMigrations } from '../../src/processes/deposit-watcher/migrations/index.js';
import { readModelMigrations } from '../../src/projections/migrations/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/** The read models' set as it was before the devnet's and the watchers' tables got sets of their own. */
const readModelsBeforeTheMove: MigrationSet = {
  schema: 'public',
  migrations: Object.fromEntries(
    Object.entries({ ...readModelMigrations.migrations, ...devnetMigrations.migrations, ...chainWatcherMigrations.migrations }).sort(([a], [b]) => a.localeCompare(b)),
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
    expect(await recorded(database, 'devnet_migration')).toEqual(['20261122T1300-devnet']);
    expect(await recorded(database, 'chain_watcher_migration')).toEqual(['20261122T1900-chain-watchers']);
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

    expect(applied).toEqual([[], []]);
    expect(await recorded(database, 'devnet_migration')).toEqual(['20261122T1300-devnet']);
    expect(await recorded(database, 'chain_watcher_migration')).toEqual(['20261122T1900-chain-watchers']);
    expect(await recorded(database, 'kysely_migration')).toEqual(Object.keys(readModelMigrations.migrations).sort());
    expect((await database.pool.query('select next_block from chain_watcher_cursors')).rows).toEqual([{ next_block: '42' }]);
  });
});
