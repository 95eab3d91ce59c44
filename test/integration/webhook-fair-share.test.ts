import { sql, type Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { readModelMigrations } from '../../src/projections/migrations/index.js';
import { claimFairShares } from '../../src/webhooks/claims.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { enqueueTestWebhooks, insertOrganization } from '../support/webhook-fixtures.js';

const claimOptions = { maxAttempts: 6, leaseMs: 60_000 };

/**
 * One organization's backlog must not hold another's webhooks back: each claim gives every
 * organization with deliveries due a share, each organization's oldest first.
 */
describe('webhook claims: a fair share per organization', () => {
  let database: TestDatabase;
  let db: Kysely<Database>;

  beforeEach(async () => {
    database = await createTestDatabase('webhook_fair_share');
    await migrateToLatest(database.pool, readModelMigrations);
    db = createDatabase(database.pool);
  });
  afterEach(async () => {
    await database.drop();
  });

  it('claims the few due deliveries of one organization in the first claim, beside another organization’s older backlog', async () => {
    const backlogged = await insertOrganization(db, { webhookUrl: 'http://127.0.0.1:9/hooks' });
    const loaded = await insertOrganization(db, { webhookUrl: 'http://127.0.0.1:9/hooks' });
    const backlog = await enqueueTestWebhooks(db, backlogged.orgId, 300);
    const few = await enqueueTestWebhooks(db, loaded.orgId, 3);

    const first = await claimFairShares(db, { ...claimOptions, limit: 100 });
    const ids = first.deliveries.map((claim) => claim.id);
    expect(ids).toHaveLength(100);
    // every one of the few, however long the backlog
    expect(ids.filter((id) => few.includes(id)).sort()).toEqual([...few].sort());
    // the backlog's oldest, in order: its share and what the few left unused
    expect(ids.filter((id) => backlog.includes(id)).sort()).toEqual(backlog.slice(0, 97).sort());
    // the backlogged organization got all it could: more of it is due
    expect(first.shareFilled).toBe(true);

    // alone now, the backlog gets whole claims, oldest first
    const second = await claimFairShares(db, { ...claimOptions, limit: 100, cursor: first.cursor });
    expect(second.deliveries.map((claim) => claim.id).sort()).toEqual(backlog.slice(97, 197).sort());
  });

  it('goes round the organizations: with more due than one claim has room for, the next claim starts after the last one served', async () => {
    const organizations = [];
    for (let index = 0; index < 3; index++) organizations.push(await insertOrganization(db, { webhookUrl: 'http://127.0.0.1:9/hooks' }));
    for (const { orgId } of organizations) await enqueueTestWebhooks(db, orgId, 5);
    const inOrder = organizations.map(({ orgId }) => orgId).sort();

    const first = await claimFairShares(db, { ...claimOptions, limit: 2 });
    expect(first.deliveries.map((claim) => claim.orgId).sort()).toEqual(inOrder.slice(0, 2));
    const second = await claimFairShares(db, { ...claimOptions, limit: 2, cursor: first.cursor });
    // the third organization first, then the round starts over
    expect(second.deliveries.map((claim) => claim.orgId).sort()).toEqual([inOrder[0], inOrder[2]].sort());
    const third = await claimFairShares(db, { ...claimOptions, limit: 2, cursor: second.cursor });
    expect(third.deliveries.map((claim) => claim.orgId).sort()).toEqual(inOrder.slice(1, 3));
  });

  it('claims no more than the limit when the shares, rounded up, would add up to more', async () => {
    for (let index = 0; index < 3; index++) {
      const { orgId } = await insertOrganization(db, { webhookUrl: 'http://127.0.0.1:9/hooks' });
      await enqueueTestWebhooks(db, orgId, 5);
    }
    // three organizations, a limit of 4: shares of 2, the second of only one organization
    const claim = await claimFairShares(db, { ...claimOptions, limit: 4 });
    expect(claim.deliveries).toHaveLength(4);
    expect(new Set(claim.deliveries.map((delivery) => delivery.orgId)).size).toBe(3);
  });

  it('claims nothing of an organization without a URL, and the deliveries of the others all the same', async () => {
    const parked = await insertOrganization(db, { webhookUrl: null });
    const sending = await insertOrganization(db, { webhookUrl: 'http://127.0.0.1:9/hooks' });
    await enqueueTestWebhooks(db, parked.orgId, 20);
    const due = await enqueueTestWebhooks(db, sending.orgId, 4);
    const claim = await claimFairShares(db, { ...claimOptions, limit: 100 });
    expect(claim.deliveries.map((delivery) => delivery.id).sort()).toEqual([...due].sort());
    expect(claim.shareFilled).toBe(false);
    expect(await claimFairShares(db, { ...claimOptions, limit: 100, cursor: claim.cursor })).toMatchObject({ deliveries: [] });
  });

  it('leaves a delivery locked by another dispatcher and takes the rest', async () => {
    const { orgId } = await insertOrganization(db, { webhookUrl: 'http://127.0.0.1:9/hooks' });
    const [locked, ...rest] = await enqueueTestWebhooks(db, orgId, 3);
    await db.transaction().execute(async (trx) => {
      await sql`select id from webhook_deliveries where id = ${locked} for update`.execute(trx);
      const claim = await claimFairShares(db, { ...claimOptions, limit: 100 });
      expect(claim.deliveries.map((delivery) => delivery.id).sort()).toEqual([...rest].sort());
    });
  });
});
