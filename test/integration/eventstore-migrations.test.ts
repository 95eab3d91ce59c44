import { afterEach, describe, expect, it } from 'vitest';
import { migrateToLatest, type MigrationSet } from '../../src/db/migrate.js';
import { eventStoreMigrations } from '../../src/eventstore/postgres/migrations/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/** The event store's set as it stood when `last` was its last migration. */
const setUpTo = (last: string): MigrationSet => ({
  schema: eventStoreMigrations.schema,
  migrations: Object.fromEntries(Object.entries(eventStoreMigrations.migrations).filter(([name]) => name <= last)),
});

const appendFunction = async (database: TestDatabase) =>
  (await database.pool.query<{ definition: string }>(`select pg_get_functiondef('eventstore.append_batch_checks'::regproc) as definition`)).rows[0]!.definition;

/**
 * A store that ran the two batch-append migrations later taken back (20261127T1400 and T1500) still
 * matches the set, and ends with the same function as a new store; 20261127T1900 put 20261127T1200's
 * function back, and 20261128T0100 replaces it on every store alike.
 */
describe('the event store migrations', () => {
  const databases: TestDatabase[] = [];
  afterEach(async () => {
    await Promise.all(databases.splice(0).map((database) => database.drop()));
  });

  it('take a store that ran 20261127T1500 to the function a new store gets, running only what followed', async () => {
    const upgraded = await createTestDatabase('es_upgraded');
    const fresh = await createTestDatabase('es_fresh');
    const atTwelve = await createTestDatabase('es_at_1200');
    databases.push(upgraded, fresh, atTwelve);

    await migrateToLatest(upgraded.pool, setUpTo('20261127T1500-append-batch-checks-heads-at-lock'));
    const beforeUpgrade = await appendFunction(upgraded);
    const applied = await migrateToLatest(upgraded.pool, eventStoreMigrations);
    await migrateToLatest(fresh.pool, eventStoreMigrations);
    await migrateToLatest(atTwelve.pool, setUpTo('20261127T1200-append-batch-checks-no-empty-cleanup'));

    expect(applied).toEqual(['20261127T1900-append-batch-checks-as-at-1200', '20261128T0100-append-batch-checks-linear-heads']);
    expect(await appendFunction(upgraded)).not.toBe(beforeUpgrade);
    expect(await appendFunction(upgraded)).toBe(await appendFunction(fresh));
    expect(await appendFunction(fresh)).not.toBe(await appendFunction(atTwelve));
  });

  it('20261127T1900 put 20261127T1200\'s function back; 20261128T0100 alone follows it', async () => {
    const atNineteen = await createTestDatabase('es_at_1900');
    const atTwelve = await createTestDatabase('es_at_1200_only');
    databases.push(atNineteen, atTwelve);

    await migrateToLatest(atNineteen.pool, setUpTo('20261127T1900-append-batch-checks-as-at-1200'));
    await migrateToLatest(atTwelve.pool, setUpTo('20261127T1200-append-batch-checks-no-empty-cleanup'));
    expect(await appendFunction(atNineteen)).toBe(await appendFunction(atTwelve));

    expect(await migrateToLatest(atNineteen.pool, eventStoreMigrations)).toEqual(['20261128T0100-append-batch-checks-linear-heads']);
  });
});
