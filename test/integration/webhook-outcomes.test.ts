import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createLogger } from '../../src/log.js';
import { readModelMigrations } from '../../src/projections/migrations/index.js';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { enqueueTestWebhooks, insertOrganization, testEncryptionKey } from '../support/webhook-fixtures.js';
import { waitUntil } from '../support/webhook-receiver.js';

/** A receiver that holds its first answer until the test releases it, and answers the rest at once. */
const startHoldingReceiver = async () => {
  const received: string[] = [];
  let releaseFirst: () => void = () => undefined;
  const firstReleased = new Promise<void>((resolve) => (releaseFirst = resolve));
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const index = received.push(String(request.headers['x-webhook-id'])) - 1;
      if (index === 0) void firstReleased.then(() => response.writeHead(200).end());
      else response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    releaseFirst: () => releaseFirst(),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};

describe('webhook outcomes', () => {
  let database: TestDatabase;
  let db: Kysely<Database>;

  beforeAll(async () => {
    database = await createTestDatabase('webhook_outcomes');
    await migrateToLatest(database.pool, readModelMigrations);
    db = createDatabase(database.pool);
  });
  afterAll(async () => {
    await database.drop();
  });

  it('sends the next delivery while the outcome of the one before still waits to be recorded, and records both', async () => {
    const receiver = await startHoldingReceiver();
    const { orgId } = await insertOrganization(db, { webhookUrl: receiver.url });
    const ids = await enqueueTestWebhooks(db, orgId, 2);
    // one send slot: before, it stayed taken until the attempt's outcome was written
    const dispatcher = new WebhookDispatcher({
      db,
      listen: database.config,
      encryptionKey: testEncryptionKey,
      retryDelaysMs: [20],
      logger: createLogger('silent'),
      timeoutMs: 30_000,
      pollIntervalMs: 60_000,
      concurrency: 1,
    });
    const blocker = await database.pool.connect();
    try {
      dispatcher.start();
      await waitUntil(() => receiver.received.length === 1, 20_000, 'the first delivery');
      const [first] = receiver.received;
      // the first attempt's outcome cannot be written while another transaction holds its row
      await blocker.query('begin');
      await blocker.query('select id from webhook_deliveries where id = $1 for update', [first]);
      receiver.releaseFirst();
      await waitUntil(() => receiver.received.length === 2, 20_000, 'the second delivery while the first outcome waits');
      expect(new Set(receiver.received)).toEqual(new Set(ids));
      expect(await db.selectFrom('webhook_deliveries').select('status').where('id', '=', first!).executeTakeFirstOrThrow()).toEqual({ status: 'pending' });
      await blocker.query('rollback');
      await waitUntil(
        async () => (await db.selectFrom('webhook_deliveries').select('status').where('status', '=', 'delivered').execute()).length === 2,
        20_000,
        'both outcomes recorded',
      );
      await dispatcher.stop();
      const rows = await db.selectFrom('webhook_deliveries').select(['id', 'status', 'attempts', 'claim_token']).orderBy('id').execute();
      expect(rows).toEqual([...ids].sort().map((id) => ({ id, status: 'delivered', attempts: 1, claim_token: null })));
      expect(await db.selectFrom('webhook_attempts').select(['delivery_id', 'status_code']).where('finished_at', 'is not', null).execute()).toHaveLength(2);
    } finally {
      await blocker.query('rollback').catch(() => undefined);
      blocker.release();
      await dispatcher.stop();
      await receiver.close();
    }
  });
});
