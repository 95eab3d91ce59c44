import { sql, type Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { readModelMigrations } from '../../src/projections/migrations/index.js';
import { claimFairShares, failExhaustedDeliveries, INTERRUPTED_ERROR } from '../../src/webhooks/claims.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { enqueueTestWebhooks, insertOrganization } from '../support/webhook-fixtures.js';

const withUrl = { webhookUrl: 'http://127.0.0.1:9/hooks' };
/** a lease that has expired by the next statement: the attempt's dispatcher vanished */
const expiredAtOnce = { leaseMs: 0 };

/**
 * The exhausted-delivery check reads the head of each organization's due deliveries, up to the
 * first a claim could take: a delivery whose last attempt was interrupted lies there.
 */
describe('webhook claims: deliveries whose last attempt was interrupted', () => {
  let database: TestDatabase;
  let db: Kysely<Database>;

  beforeEach(async () => {
    database = await createTestDatabase('webhook_exhausted');
    await migrateToLatest(database.pool, readModelMigrations);
    db = createDatabase(database.pool);
  });
  afterEach(async () => {
    await database.drop();
  });

  const statuses = async (ids: readonly string[]) => {
    const rows = await db.selectFrom('webhook_deliveries').select(['id', 'status', 'attempts', 'last_error']).where('id', 'in', [...ids]).execute();
    return ids.map((id) => rows.find((row) => row.id === id)!);
  };

  it('fails each organization’s exhausted deliveries at the head of its due ones, and no other', async () => {
    const organizations = [];
    for (let index = 0; index < 3; index++) {
      const { orgId } = await insertOrganization(db, withUrl);
      organizations.push({ orgId, ids: await enqueueTestWebhooks(db, orgId, 5) });
    }
    // each organization's oldest two get their last attempt, and their dispatcher vanishes
    const claim = await claimFairShares(db, { limit: 6, maxAttempts: 1, ...expiredAtOnce });
    expect(claim.deliveries).toHaveLength(6);

    expect(await failExhaustedDeliveries(db, { maxAttempts: 1, limit: 100 })).toBe(6);

    for (const { ids } of organizations) {
      expect((await statuses(ids)).map((row) => [row.status, row.attempts])).toEqual([
        ['failed', 1],
        ['failed', 1],
        ['pending', 0],
        ['pending', 0],
        ['pending', 0],
      ]);
      expect((await statuses(ids))[0]!.last_error).toBe(INTERRUPTED_ERROR);
    }
    expect(await failExhaustedDeliveries(db, { maxAttempts: 1, limit: 100 })).toBe(0);
  });

  it('reaches an exhausted delivery behind one a claim could take once the claims have taken that one', async () => {
    const { orgId } = await insertOrganization(db, withUrl);
    const [first, second, third] = await enqueueTestWebhooks(db, orgId, 3);
    // the second's last attempt was interrupted; the first, before it, has attempts left
    await sql`update webhook_deliveries set attempts = 1, claim_token = gen_random_uuid(), leased_until = now() where id = ${second}`.execute(db);

    expect(await failExhaustedDeliveries(db, { maxAttempts: 1, limit: 100 })).toBe(0);
    const claim = await claimFairShares(db, { limit: 1, maxAttempts: 1, leaseMs: 60_000 });
    expect(claim.deliveries.map((delivery) => delivery.id)).toEqual([first]);
    expect(await failExhaustedDeliveries(db, { maxAttempts: 1, limit: 100 })).toBe(1);

    expect((await statuses([first!, second!, third!])).map((row) => row.status)).toEqual(['pending', 'failed', 'pending']);
  });
});
