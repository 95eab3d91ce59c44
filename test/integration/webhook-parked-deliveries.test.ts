import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { readModelMigrations } from '../../src/projections/migrations/index.js';
import { operationsFigures } from '../../src/projections/operations-figures.js';
import { msUntilNextDue } from '../../src/webhooks/claims.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { enqueueTestWebhooks, insertOrganization } from '../support/webhook-fixtures.js';

/** deliveries of an organization without a URL, parked until it sets one: a store with a long history holds hundreds of thousands */
const PARKED = 2_000;

/**
 * The outbox's readers that run all the time (the dispatcher's next-due look, the /metrics gauges)
 * cost what the backlog is, not what is parked: counted as the rows (heap and index entries) their
 * scans of webhook_deliveries returned.
 */
describe('deliveries parked for a URL, as the outbox readers see them', () => {
  let database: TestDatabase;
  let db: Kysely<Database>;

  beforeAll(async () => {
    database = await createTestDatabase('webhook_parked');
    await migrateToLatest(database.pool, readModelMigrations);
    db = createDatabase(database.pool);
    const { orgId } = await insertOrganization(db, { webhookUrl: null });
    await enqueueTestWebhooks(db, orgId, PARKED);
  });
  afterAll(async () => {
    await database.drop();
  });

  /**
   * `read` in a transaction of its own, with the rows its scans of webhook_deliveries returned:
   * PostgreSQL's count in the session's pending statistics, taken before and after it in the same
   * transaction (no parallel workers, whose counts it would not see)
   */
  const withRowsRead = <Result>(read: (trx: Kysely<Database>) => Promise<Result>): Promise<{ result: Result; rowsRead: number }> =>
    db.transaction().execute(async (trx) => {
      await sql`set local max_parallel_workers_per_gather = 0`.execute(trx);
      const rowsReturned = async () =>
        Number(
          (
            await sql<{ read: string }>`
              select sum(pg_stat_get_xact_tuples_returned(relation))::text as read
                from (select 'webhook_deliveries'::regclass::oid as relation
                      union all select indexrelid from pg_index where indrelid = 'webhook_deliveries'::regclass) as relations
            `.execute(trx)
          ).rows[0]!.read,
        );
      const before = await rowsReturned();
      const result = await read(trx);
      return { result, rowsRead: (await rowsReturned()) - before };
    });

  /** the gauges' query; it reads no event */
  const outboxFigures = (trx: Kysely<Database>) =>
    operationsFigures(trx, { headPosition: () => Promise.reject(new Error('not read')), readAll: () => Promise.reject(new Error('not read')) }, []).outbox();

  it('finds nothing due and nothing to report without reading the parked deliveries', async () => {
    expect(await db.selectFrom('webhook_deliveries').select(sql<string>`count(*)::text`.as('count')).executeTakeFirstOrThrow()).toEqual({ count: String(PARKED) });
    const nextDue = await withRowsRead(msUntilNextDue);
    expect(nextDue.result).toBeNull();
    expect(nextDue.rowsRead).toBeLessThanOrEqual(1);
    const figures = await withRowsRead(outboxFigures);
    expect(figures.result).toEqual({ pending: 0, oldestAgeSeconds: 0 });
    expect(figures.rowsRead).toBeLessThanOrEqual(1);
  });

  it('finds a due delivery ahead of them and reports it alone, reading only it', async () => {
    const { orgId } = await insertOrganization(db, { webhookUrl: 'https://receiver.example/hooks' });
    await enqueueTestWebhooks(db, orgId, 1);
    const nextDue = await withRowsRead(msUntilNextDue);
    // due at its insertion: now or just past
    expect(nextDue.result).not.toBeNull();
    expect(nextDue.result!.ms).toBeLessThanOrEqual(0);
    expect(nextDue.rowsRead).toBeLessThanOrEqual(2);
    const figures = await withRowsRead(outboxFigures);
    expect(figures.result.pending).toBe(1);
    expect(figures.rowsRead).toBeLessThanOrEqual(3);
  });
});
