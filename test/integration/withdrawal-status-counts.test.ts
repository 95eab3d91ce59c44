import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { operationsFigures } from '../../src/projections/operations-figures.js';
import { readModelMigrations } from '../../src/projections/migrations/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/** the counts read the read model only: no event store behind them */
const noEvents = { headPosition: async () => 0n, readAll: async () => [] };

/** ledgergate_withdrawals{status}: counts kept by triggers, so a scrape never counts the table. */
describe('withdrawal counts by status', () => {
  let database: TestDatabase;
  let db: ReturnType<typeof createDatabase>;

  beforeAll(async () => {
    database = await createTestDatabase('withdrawal_counts');
    await migrateToLatest(database.pool, readModelMigrations);
    db = createDatabase(database.pool);
  });
  afterAll(async () => {
    await database.drop();
  });

  const row = (id: string, seq: number, status: string) => sql`
    (${id}, ${seq}, 'org', ${status}, 'eip155:1', 'eip155:1/slip44:60', 1, ${id}, '{}'::jsonb, now(), now())`;
  const insert = (...rows: ReturnType<typeof row>[]) =>
    sql`insert into withdrawals (id, seq, org_id, status, chain_id, token_id, amount, reference, state, created_at, updated_at) values ${sql.join(rows)}`.execute(db);
  const figures = () => operationsFigures(db, noEvents, []).withdrawalsByStatus();

  it('follows inserts, updates of any number of rows, deletes and truncation', async () => {
    expect(await figures()).toEqual({ Pending: 0, PendingApproval: 0, Processing: 0, Completed: 0, Failed: 0, Cancelled: 0 });
    await insert(row('a', 1, 'Pending'), row('b', 2, 'Pending'), row('c', 3, 'PendingApproval'));
    expect(await figures()).toMatchObject({ Pending: 2, PendingApproval: 1, Processing: 0 });
    await sql`update withdrawals set status = 'Processing' where id in ('a', 'b')`.execute(db);
    await sql`update withdrawals set status = 'Completed' where id = 'a'`.execute(db);
    expect(await figures()).toMatchObject({ Pending: 0, PendingApproval: 1, Processing: 1, Completed: 1 });
    await sql`delete from withdrawals where id = 'c'`.execute(db);
    expect(await figures()).toMatchObject({ PendingApproval: 0, Processing: 1, Completed: 1 });
    await sql`truncate withdrawals`.execute(db);
    expect(Object.values(await figures())).toEqual([0, 0, 0, 0, 0, 0]);
  });
});
