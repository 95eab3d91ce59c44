import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/database.js';
import { migrateToLatest, type MigrationSet } from '../../src/db/migrate.js';
import { readModelMigrations } from '../../src/projections/migrations/index.js';
import { enqueueWebhooks, webhookDedupeKey, type WebhookToEnqueue } from '../../src/webhooks/outbox.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { insertOrganization } from '../support/webhook-fixtures.js';

const MIGRATION = '20261127T2000-webhook-deliveries-deduped-by-id';

/** the read models' set as it was before the outbox turned replays away by id: the migrations named before it (they run in name order) */
const beforeDedupeById: MigrationSet = {
  ...readModelMigrations,
  migrations: Object.fromEntries(Object.entries(readModelMigrations.migrations).filter(([name]) => name < MIGRATION)),
};

const dedupeKeyIndexed = async (database: TestDatabase): Promise<boolean> =>
  (await database.pool.query("select 1 from pg_constraint where conname = 'webhook_deliveries_dedupe_key_key'")).rowCount === 1;

/** webhooks of several source events, at times with milliseconds */
const webhooksOf = (orgId: string): WebhookToEnqueue[] =>
  [0, 1, 999, 123_456_789].map((offsetMs) => ({
    orgId,
    type: 'deposit.detected',
    payload: { offsetMs },
    timestamp: new Date(Date.UTC(2026, 10, 22, 10, 0, 0) + offsetMs),
    dedupeKey: webhookDedupeKey(orgId, 'deposit.detected', randomUUID()),
  }));

describe('the outbox turns a replayed delivery away by its id', () => {
  let database: TestDatabase;
  afterEach(async () => database?.drop());

  it('drops the dedupe key’s index when every delivery’s id is derived from its dedupe key, and a replay still adds nothing', async () => {
    database = await createTestDatabase('dedupe_by_id');
    await migrateToLatest(database.pool, beforeDedupeById);
    const db = createDatabase(database.pool);
    const { orgId } = await insertOrganization(db, { webhookUrl: null });
    const webhooks = webhooksOf(orgId);
    expect(await db.transaction().execute((trx) => enqueueWebhooks(trx, webhooks))).toBe(4);

    await migrateToLatest(database.pool, readModelMigrations);

    expect(await dedupeKeyIndexed(database)).toBe(false);
    // a replay or rebuild enqueues the same source events again
    expect(await db.transaction().execute((trx) => enqueueWebhooks(trx, webhooks.map((webhook) => ({ ...webhook, payload: { replayed: true } }))))).toBe(0);
    expect(await db.transaction().execute((trx) => enqueueWebhooks(trx, webhooksOf(orgId)))).toBe(4);
    expect((await db.selectFrom('webhook_deliveries').select('id').execute()).length).toBe(8);
  });

  it('keeps the index in an outbox that holds a delivery with an id not derived (enqueued before ids were), so its replay adds nothing', async () => {
    database = await createTestDatabase('dedupe_by_key');
    await migrateToLatest(database.pool, beforeDedupeById);
    const db = createDatabase(database.pool);
    const { orgId } = await insertOrganization(db, { webhookUrl: null });
    const [older, ...others] = webhooksOf(orgId);
    await db.transaction().execute((trx) => enqueueWebhooks(trx, others));
    await database.pool.query(
      `insert into webhook_deliveries (id, org_id, event_type, dedupe_key, body, event_timestamp, next_attempt_at) values ($1, $2, $3, $4, '{}', $5, 'infinity')`,
      [randomUUID(), orgId, older!.type, older!.dedupeKey, older!.timestamp],
    );

    await migrateToLatest(database.pool, readModelMigrations);

    expect(await dedupeKeyIndexed(database)).toBe(true);
    expect(await db.transaction().execute((trx) => enqueueWebhooks(trx, [older!, ...others]))).toBe(0);
    expect((await db.selectFrom('webhook_deliveries').select('id').execute()).length).toBe(4);
  });
});
