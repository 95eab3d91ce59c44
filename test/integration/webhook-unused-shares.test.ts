import type { Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { readModelMigrations } from '../../src/projections/migrations/index.js';
import { claimFairShares } from '../../src/webhooks/claims.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { enqueueTestWebhooks, insertOrganization } from '../support/webhook-fixtures.js';

const claimOptions = { maxAttempts: 6, leaseMs: 60_000 };
const withUrl = { webhookUrl: 'http://127.0.0.1:9/hooks' };

/**
 * What an organization with fewer due than its share leaves goes to the others in the same claim
 * (the dispatcher's claims): one organization's backlog beside another's few fills whole claims.
 */
describe('webhook claims: unused shares go to the other organizations', () => {
  let database: TestDatabase;
  let db: Kysely<Database>;

  beforeEach(async () => {
    database = await createTestDatabase('webhook_unused_shares');
    await migrateToLatest(database.pool, readModelMigrations);
    db = createDatabase(database.pool);
  });
  afterEach(async () => {
    await database.drop();
  });

  it('shares what is left evenly among the organizations that can use it, never more than the limit', async () => {
    const organizations = [];
    for (const due of [40, 3, 40]) {
      const { orgId } = await insertOrganization(db, withUrl);
      await enqueueTestWebhooks(db, orgId, due);
      organizations.push(orgId);
    }
    // a limit of 31: shares of 11; the one with 3 leaves 8, so the other two get 14 each (the first in the round one more)
    const claim = await claimFairShares(db, { ...claimOptions, limit: 31 });
    const perOrganization = organizations.map((orgId) => claim.deliveries.filter((delivery) => delivery.orgId === orgId).length);
    expect(perOrganization[1]).toBe(3);
    expect(perOrganization.reduce((sum, count) => sum + count, 0)).toBe(31);
    expect([perOrganization[0], perOrganization[2]].sort()).toEqual([14, 14]);
  });

  it('does not count a claim that took every due delivery as a backlog', async () => {
    for (const due of [5, 3]) {
      const { orgId } = await insertOrganization(db, withUrl);
      await enqueueTestWebhooks(db, orgId, due);
    }
    const claim = await claimFairShares(db, { ...claimOptions, limit: 6 });
    expect(claim.deliveries).toHaveLength(6);
    expect(claim.shareFilled).toBe(true);
    const rest = await claimFairShares(db, { ...claimOptions, limit: 6, cursor: claim.cursor });
    expect(rest.deliveries).toHaveLength(2);
    expect(rest.shareFilled).toBe(false);
  });
});
