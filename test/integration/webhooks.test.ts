import { createHmac, randomUUID } from 'node:crypto';
import { OpenAPIHono } from '@hono/zod-openapi';
import { sql, type Kysely } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/errors.js';
import type { AppEnv } from '../../src/api/request-context.js';
import { webhookRoutes } from '../../src/api/webhooks/index.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createPool } from '../../src/db/pool.js';
import type { WebhookDeliveryStatus } from '../../src/db/tables/webhook-deliveries.js';
import { DomainError } from '../../src/errors.js';
import { createLogger } from '../../src/log.js';
import { readModelMigrations } from '../../src/projections/migrations/index.js';
import { claimDueDeliveries, INTERRUPTED_ERROR, recordAttemptOutcome } from '../../src/webhooks/claims.js';
import { WebhookDispatcher, type WebhookDispatcherOptions } from '../../src/webhooks/dispatcher.js';
import { enqueueWebhook, enqueueWebhooks, MAX_WEBHOOK_BODY_BYTES, serializeWebhookBody, webhookDedupeKey } from '../../src/webhooks/outbox.js';
import { SHUT_DOWN_ERROR } from '../../src/webhooks/send.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { enqueueTestWebhooks, insertOrganization, setSigningSecret, setWebhookUrl, testEncryptionKey } from '../support/webhook-fixtures.js';
import { startWebhookReceiver, waitUntil, type ReceiverScript, type WebhookReceiver } from '../support/webhook-receiver.js';

const logger = createLogger('silent');
const hmac = (secret: string, body: Buffer) => createHmac('sha256', secret).update(body).digest('hex');

describe('webhooks', () => {
  let database: TestDatabase;
  let db: Kysely<Database>;
  const dispatchers: WebhookDispatcher[] = [];
  const receivers: WebhookReceiver[] = [];
  const cleanups: (() => Promise<void>)[] = [];

  /**
   * A started dispatcher. The poll interval is a minute: everything these tests see happen is
   * driven by notifications and by the dispatcher's own schedule, never by the safety-net poll.
   */
  const startDispatcher = (options: Partial<WebhookDispatcherOptions> = {}) => {
    const dispatcher = new WebhookDispatcher({
      db,
      listen: database.config,
      encryptionKey: testEncryptionKey,
      retryDelaysMs: [20, 20, 20, 20, 20],
      logger,
      timeoutMs: 5_000,
      pollIntervalMs: 60_000,
      ...options,
    });
    dispatchers.push(dispatcher);
    dispatcher.start();
    return dispatcher;
  };

  const receiver = async (script?: ReceiverScript) => {
    const started = await startWebhookReceiver(script);
    receivers.push(started);
    return started;
  };

  const delivery = (id: string) => db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const attemptsOf = (id: string) =>
    db.selectFrom('webhook_attempts').selectAll().where('delivery_id', '=', id).orderBy('started_at').orderBy('attempt').execute();
  const waitForStatus = (id: string, status: WebhookDeliveryStatus, timeoutMs = 20_000) =>
    waitUntil(async () => (await delivery(id)).status === status, timeoutMs, `delivery ${id} to be ${status}`);
  const idsReceived = (target: WebhookReceiver) => target.received.map((request) => request.headers['x-webhook-id']);

  beforeAll(async () => {
    database = await createTestDatabase('webhooks');
    await migrateToLatest(database.pool, readModelMigrations);
    db = createDatabase(database.pool);
  });
  beforeEach(async () => {
    await sql`truncate table webhook_attempts, webhook_deliveries, organizations`.execute(db);
  });
  afterEach(async () => {
    await Promise.all(dispatchers.splice(0).map((dispatcher) => dispatcher.stop()));
    await Promise.all(receivers.splice(0).map((started) => started.close()));
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });
  afterAll(async () => {
    await database.drop();
  });

  describe('outbox', () => {
    it('enqueues one delivery per dedupe key, whose body is exactly { type, timestamp, payload }', async () => {
      const { orgId } = await insertOrganization(db, { webhookUrl: null });
      const webhook = {
        orgId,
        type: 'deposit.detected' as const,
        payload: { txnHash: '0xabc', amount: '115792089237316195423570985008687907853269984665640564039457584007913129639935', confirmations: 0 },
        timestamp: new Date('2026-11-22T10:00:00.123Z'),
        dedupeKey: webhookDedupeKey(orgId, 'deposit.detected', randomUUID()),
      };
      expect(await db.transaction().execute((trx) => enqueueWebhook(trx, webhook))).toBe(true);
      // a replay or rebuild of the projection enqueues the same source event again
      expect(await db.transaction().execute((trx) => enqueueWebhook(trx, { ...webhook, payload: { replayed: true } }))).toBe(false);

      const rows = await db.selectFrom('webhook_deliveries').selectAll().execute();
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        org_id: orgId,
        event_type: 'deposit.detected',
        dedupe_key: webhook.dedupeKey,
        status: 'pending',
        attempts: 0,
        claim_token: null,
        last_status_code: null,
        last_error: null,
        delivered_at: null,
        body:
          '{"type":"deposit.detected","timestamp":"2026-11-22T10:00:00.123Z","payload":{"txnHash":"0xabc",' +
          '"amount":"115792089237316195423570985008687907853269984665640564039457584007913129639935","confirmations":0}}',
      });
      expect(rows[0]?.event_timestamp.toISOString()).toBe('2026-11-22T10:00:00.123Z');
    });

    it('stores each body of a batch byte for byte as serialized, in order, whatever characters its payload holds', async () => {
      const { orgId } = await insertOrganization(db, { webhookUrl: null });
      const texts = ['a "quoted" \\ back\\slash', '{"looks":"like json"}', 'line\nbreak\ttab \u2028 \u0000', 'é € 😀', 'lone \ud800 and \udc00 surrogates', '', 'NULL', '{}', "it's"];
      const timestamp = new Date('2026-11-22T10:00:00.123Z');
      const webhooks = texts.map((text) => ({ orgId, type: 'account.created' as const, payload: { text, nested: { text } }, timestamp, dedupeKey: webhookDedupeKey(orgId, 'account.created', randomUUID()) }));
      expect(await db.transaction().execute((trx) => enqueueWebhooks(trx, webhooks))).toBe(texts.length);

      const rows = await db.selectFrom('webhook_deliveries').select(['dedupe_key', 'body']).where('org_id', '=', orgId).orderBy('seq').execute();
      expect(rows).toEqual(webhooks.map((webhook) => ({ dedupe_key: webhook.dedupeKey, body: serializeWebhookBody(webhook.type, timestamp, webhook.payload) })));
      expect(rows.map((row) => (JSON.parse(row.body) as { payload: { text: string } }).payload.text)).toEqual(texts);
    });

    it('enqueues nothing in a transaction that rolls back', async () => {
      const { orgId } = await insertOrganization(db, { webhookUrl: null });
      await expect(
        db.transaction().execute(async (trx) => {
          await enqueueWebhook(trx, { orgId, type: 'account.created', payload: {}, timestamp: new Date(), dedupeKey: `${orgId}:k` });
          throw new Error('the projection batch failed');
        }),
      ).rejects.toThrow('the projection batch failed');
      expect(await db.selectFrom('webhook_deliveries').select('id').execute()).toEqual([]);
    });

    it('refuses a body over the bound', async () => {
      const { orgId } = await insertOrganization(db, { webhookUrl: null });
      const payload = { blob: 'x'.repeat(MAX_WEBHOOK_BODY_BYTES) };
      await expect(
        db.transaction().execute((trx) => enqueueWebhook(trx, { orgId, type: 'account.created', payload, timestamp: new Date(), dedupeKey: `${orgId}:big` })),
      ).rejects.toThrow(/over 262144/);
    });
  });

  describe('dispatcher', () => {
    it('signs the exact bytes it sends with the current secret, in both signature headers', async () => {
      const target = await receiver();
      const { orgId, signingSecret } = await insertOrganization(db, { webhookUrl: target.url });
      const [id] = await enqueueTestWebhooks(db, orgId);
      startDispatcher();
      await target.waitForRequests(1);
      await waitForStatus(id!, 'delivered');

      const [request] = target.received;
      const stored = await delivery(id!);
      expect(request!.body.toString('utf8')).toBe(stored.body);
      expect(JSON.parse(request!.body.toString('utf8'))).toEqual({
        type: 'deposit.detected',
        timestamp: '2026-11-22T10:00:00.000Z',
        payload: { txnHash: `0x${'0'.repeat(64)}`, amount: '1000', confirmations: 0 },
      });
      expect(Object.keys(JSON.parse(request!.body.toString('utf8')) as object)).toEqual(['type', 'timestamp', 'payload']);
      expect(request!.headers['x-webhook-signature']).toBe(hmac(signingSecret, request!.body));
      expect(request!.headers['x-webhook-signature']).toMatch(/^[0-9a-f]{64}$/);
      expect(request!.headers['x-signature']).toBe(request!.headers['x-webhook-signature']);
      expect(request!.headers['x-webhook-id']).toBe(id);
      expect(request!.headers['x-webhook-timestamp']).toBe('2026-11-22T10:00:00.000Z');
      expect(request!.headers['content-type']).toBe('application/json');
      expect(request!.headers['user-agent']).toBe('ledgergate-webhooks');
      expect(stored).toMatchObject({ status: 'delivered', attempts: 1, last_status_code: 200, last_error: null, next_attempt_at: null, claim_token: null });
      expect(stored.delivered_at).toBeInstanceOf(Date);
      const attempts = await attemptsOf(id!);
      expect(attempts).toHaveLength(1);
      expect(attempts[0]).toMatchObject({ attempt: 1, status_code: 200, error: null });
      expect(attempts[0]?.finished_at).toBeInstanceOf(Date);
    });

    it('signs with the secret as it is at send time: a rotation applies to the next attempt', async () => {
      const target = await receiver((_request, index) => (index === 0 ? 500 : 200));
      const { orgId, signingSecret } = await insertOrganization(db, { webhookUrl: target.url });
      const [id] = await enqueueTestWebhooks(db, orgId);
      startDispatcher({ retryDelaysMs: [300] });
      await target.waitForRequests(1);
      await setSigningSecret(db, orgId, 'rotated-secret');
      await target.waitForRequests(2);
      await waitForStatus(id!, 'delivered');

      const [first, second] = target.received;
      expect(first!.headers['x-webhook-signature']).toBe(hmac(signingSecret, first!.body));
      expect(second!.headers['x-webhook-signature']).toBe(hmac('rotated-secret', second!.body));
      expect(second!.body.equals(first!.body)).toBe(true);
    });

    it('wakes on the notification of a new delivery, not on its (minute-long) poll', async () => {
      const target = await receiver();
      const { orgId } = await insertOrganization(db, { webhookUrl: target.url });
      startDispatcher();
      // let it go idle: nothing is pending, so it sleeps for its poll interval
      await new Promise((resolve) => setTimeout(resolve, 200));
      const [id] = await enqueueTestWebhooks(db, orgId);
      await waitForStatus(id!, 'delivered', 20_000);
      expect(idsReceived(target)).toEqual([id]);
    });

    it('lets a send in flight finish when it stops', async () => {
      const target = await receiver(() => ({ status: 200, afterMs: 300 }));
      const { orgId } = await insertOrganization(db, { webhookUrl: target.url });
      const [id] = await enqueueTestWebhooks(db, orgId);
      const dispatcher = startDispatcher();
      await target.waitForRequests(1);
      await dispatcher.stop();
      expect(await delivery(id!)).toMatchObject({ status: 'delivered', attempts: 1, claim_token: null, last_status_code: 200 });
    });

    it('cuts off a send still waiting when the grace period of stop() is over, and retries it on schedule', async () => {
      const target = await receiver((_request, index) => (index === 0 ? 'hang' : 200));
      const { orgId } = await insertOrganization(db, { webhookUrl: target.url });
      const [id] = await enqueueTestWebhooks(db, orgId);
      const first = startDispatcher({ retryDelaysMs: [50] });
      await target.waitForRequests(1);
      await first.stop({ graceMs: 100 });
      expect(await delivery(id!)).toMatchObject({ status: 'pending', attempts: 1, claim_token: null, last_error: SHUT_DOWN_ERROR });

      startDispatcher({ retryDelaysMs: [50] });
      await waitForStatus(id!, 'delivered');
      expect(idsReceived(target)).toEqual([id, id]);
      expect((await attemptsOf(id!)).map((attempt) => [attempt.attempt, attempt.status_code, attempt.error])).toEqual([
        [1, null, SHUT_DOWN_ERROR],
        [2, 200, null],
      ]);
    });

    it('retries a failing receiver after the configured delays, in order, with one x-webhook-id', async () => {
      const delays = [100, 200, 300, 400, 500];
      const target = await receiver((_request, index) => (index < 3 ? 503 : 200));
      const { orgId } = await insertOrganization(db, { webhookUrl: target.url });
      const [id] = await enqueueTestWebhooks(db, orgId);
      startDispatcher({ retryDelaysMs: delays });
      await waitForStatus(id!, 'delivered');

      expect(target.received).toHaveLength(4);
      expect(new Set(idsReceived(target))).toEqual(new Set([id]));
      const gaps = target.received.slice(1).map((request, index) => request.receivedAtMs - target.received[index]!.receivedAtMs);
      expect(gaps).toHaveLength(3);
      gaps.forEach((gap, index) => expect(gap).toBeGreaterThanOrEqual(delays[index]!));
      const attempts = await attemptsOf(id!);
      expect(attempts.map((attempt) => [attempt.attempt, attempt.status_code, attempt.error])).toEqual([
        [1, 503, 'HTTP 503'],
        [2, 503, 'HTTP 503'],
        [3, 503, 'HTTP 503'],
        [4, 200, null],
      ]);
      expect(await delivery(id!)).toMatchObject({ status: 'delivered', attempts: 4, last_status_code: 200, last_error: null });
    });

    it('marks a delivery failed after 6 attempts (5 retries) when no attempt is acknowledged', async () => {
      const target = await receiver(() => 500);
      const { orgId } = await insertOrganization(db, { webhookUrl: target.url });
      const [id] = await enqueueTestWebhooks(db, orgId);
      const lines: Record<string, unknown>[] = [];
      const dispatcher = startDispatcher({ retryDelaysMs: [20, 20, 20, 20, 20], logger: createLogger('debug', {}, (line) => lines.push(JSON.parse(line) as Record<string, unknown>)) });
      await waitForStatus(id!, 'failed');
      await dispatcher.stop();

      // every failed attempt is a warning naming the organization and the delivery, for the operator to follow up
      expect(lines.filter((line) => line.level === 'warn').map(({ msg, orgId: org, deliveryId, attempt }) => ({ msg, org, deliveryId, attempt }))).toEqual([
        ...[1, 2, 3, 4, 5].map((attempt) => ({ msg: 'webhooks: delivery attempt failed; retrying later', org: orgId, deliveryId: id, attempt })),
        { msg: 'webhooks: delivery failed after its last attempt', org: orgId, deliveryId: id, attempt: 6 },
      ]);
      expect(target.received).toHaveLength(6);
      expect(new Set(idsReceived(target))).toEqual(new Set([id]));
      expect(await delivery(id!)).toMatchObject({
        status: 'failed',
        attempts: 6,
        next_attempt_at: null,
        claim_token: null,
        last_status_code: 500,
        last_error: 'HTTP 500',
        delivered_at: null,
      });
      expect((await attemptsOf(id!)).map((attempt) => attempt.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    });

    it('counts a receiver that does not answer within the time-out as a failed attempt', async () => {
      const target = await receiver((_request, index) => (index === 0 ? 'hang' : 200));
      const { orgId } = await insertOrganization(db, { webhookUrl: target.url });
      const [id] = await enqueueTestWebhooks(db, orgId);
      startDispatcher({ timeoutMs: 200, retryDelaysMs: [50] });
      await waitForStatus(id!, 'delivered');

      expect(target.received).toHaveLength(2);
      const attempts = await attemptsOf(id!);
      expect(attempts.map((attempt) => [attempt.attempt, attempt.status_code, attempt.error])).toEqual([
        [1, null, 'timed out: no response within 200 ms'],
        [2, 200, null],
      ]);
      expect(attempts[0]!.duration_ms).toBeGreaterThanOrEqual(195);
      expect(await delivery(id!)).toMatchObject({ status: 'delivered', attempts: 2 });
    });

    it('does not follow a redirect: a 3xx is a failed attempt', async () => {
      const target = await receiver(() => 302);
      const { orgId } = await insertOrganization(db, { webhookUrl: target.url });
      const [id] = await enqueueTestWebhooks(db, orgId);
      startDispatcher({ retryDelaysMs: [] });
      await waitForStatus(id!, 'failed');

      expect(target.received).toHaveLength(1);
      expect(await delivery(id!)).toMatchObject({ attempts: 1, last_status_code: 302, last_error: 'HTTP 302 (redirects are not followed)' });
    });

    it('CONTRACT §7: waits, pending and unattempted, while the organization has no webhook URL; sent at once when one is set', async () => {
      const target = await receiver();
      const { orgId } = await insertOrganization(db, { webhookUrl: null });
      const [waiting] = await enqueueTestWebhooks(db, orgId);
      // another organization's delivery, sent meanwhile: the dispatcher has claimed what was due
      const other = await insertOrganization(db, { webhookUrl: target.url });
      const [sent] = await enqueueTestWebhooks(db, other.orgId);
      startDispatcher({ retryDelaysMs: [10, 10] });
      await waitForStatus(sent!, 'delivered');
      expect(await delivery(waiting!)).toMatchObject({ status: 'pending', attempts: 0, last_error: null, claim_token: null });
      expect(await attemptsOf(waiting!)).toEqual([]);

      await setWebhookUrl(db, orgId, target.url);
      await waitForStatus(waiting!, 'delivered');
      expect(idsReceived(target)).toEqual([sent, waiting]);
      expect((await attemptsOf(waiting!)).map((attempt) => [attempt.attempt, attempt.status_code, attempt.error])).toEqual([[1, 200, null]]);
    });

    it('a delivery enqueued while its organization’s URL is being set is never left waiting (the row is read for share)', async () => {
      const target = await receiver();
      const { orgId } = await insertOrganization(db, { webhookUrl: null });
      let enqueued!: () => void;
      const enqueuedSignal = new Promise<void>((resolve) => (enqueued = resolve));
      let commit!: () => void;
      const committing = new Promise<void>((resolve) => (commit = resolve));
      // a projection batch that enqueues, then commits only after the URL is being set
      const batch = db.transaction().execute(async (trx) => {
        await enqueueWebhook(trx, { orgId, type: 'account.created', payload: {}, timestamp: new Date(), dedupeKey: `${orgId}:race` });
        enqueued();
        await committing;
      });
      await enqueuedSignal;
      const settingUrl = setWebhookUrl(db, orgId, target.url);
      // the URL's transaction waits for the batch's lock; give it the time to reach it, then commit the batch
      await waitUntil(async () => (await sql<{ waiting: boolean }>`select exists (select 1 from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()) as waiting`.execute(db)).rows[0]!.waiting, 10_000, 'the URL to wait for the batch');
      commit();
      await Promise.all([batch, settingUrl]);
      const row = await db.selectFrom('webhook_deliveries').select(['status', sql<boolean>`next_attempt_at <= now()`.as('due')]).where('org_id', '=', orgId).executeTakeFirstOrThrow();
      expect(row).toEqual({ status: 'pending', due: true });
    });

    it('a delivery of an organization that never sets a URL waits: it is neither attempted nor failed', async () => {
      const { orgId } = await insertOrganization(db, { webhookUrl: null });
      const [id] = await enqueueTestWebhooks(db, orgId);
      expect(await claimDueDeliveries(db, { limit: 100, maxAttempts: 6, leaseMs: 30_000 })).toEqual([]);
      expect(await delivery(id!)).toMatchObject({ status: 'pending', attempts: 0 });
    });

    it('loses and duplicates nothing when the process restarts between attempts', async () => {
      const target = await receiver((_request, index) => (index === 0 ? 500 : 200));
      const { orgId } = await insertOrganization(db, { webhookUrl: target.url });
      const [id] = await enqueueTestWebhooks(db, orgId);
      const first = startDispatcher({ retryDelaysMs: [500, 500] });
      await waitUntil(async () => (await delivery(id!)).last_status_code === 500, 10_000, 'attempt 1 to be recorded');
      await first.stop();
      expect(await delivery(id!)).toMatchObject({ status: 'pending', attempts: 1, claim_token: null });
      expect(target.received).toHaveLength(1);

      startDispatcher({ retryDelaysMs: [500, 500] });
      await waitForStatus(id!, 'delivered');
      expect(idsReceived(target)).toEqual([id, id]);
      expect((await attemptsOf(id!)).map((attempt) => [attempt.attempt, attempt.status_code])).toEqual([
        [1, 500],
        [2, 200],
      ]);
      expect(await delivery(id!)).toMatchObject({ status: 'delivered', attempts: 2 });
    });

    it('takes over an attempt whose dispatcher died mid-send once its lease expires; that attempt counts', async () => {
      const target = await receiver();
      const { orgId } = await insertOrganization(db, { webhookUrl: target.url });
      const [id] = await enqueueTestWebhooks(db, orgId);
      // a dispatcher claims attempt 1, then its process dies before sending or recording anything
      const claimedAt = performance.now();
      const [claim] = await claimDueDeliveries(db, { limit: 10, maxAttempts: 3, leaseMs: 300 });
      expect(claim).toMatchObject({ id, attempt: 1, webhookUrl: target.url });

      startDispatcher({ retryDelaysMs: [10, 10] });
      await waitForStatus(id!, 'delivered');
      expect(target.received).toHaveLength(1);
      expect(target.received[0]!.receivedAtMs - claimedAt).toBeGreaterThanOrEqual(295);
      const attempts = await attemptsOf(id!);
      expect(attempts.map((attempt) => [attempt.attempt, attempt.status_code, attempt.error])).toEqual([
        [1, null, INTERRUPTED_ERROR],
        [2, 200, null],
      ]);
      expect(attempts[0]!.finished_at).toBeInstanceOf(Date);
      expect(await delivery(id!)).toMatchObject({ status: 'delivered', attempts: 2 });
    });

    it('logs an attempt once, when it ends: nothing while it is in flight, then its outcome from the time it was claimed', async () => {
      const target = await receiver();
      const { orgId } = await insertOrganization(db, { webhookUrl: target.url });
      const [id] = await enqueueTestWebhooks(db, orgId);
      const [claim] = await claimDueDeliveries(db, { limit: 10, maxAttempts: 3, leaseMs: 60_000 });
      expect(claim!.claimedAt).toEqual((await delivery(id!)).updated_at);
      expect(await attemptsOf(id!)).toEqual([]);

      expect(await recordAttemptOutcome(db, claim!, { delivered: true, statusCode: 200, error: null, durationMs: 12 }, [10, 10])).toBe('delivered');
      expect(await attemptsOf(id!)).toMatchObject([{ id: claim!.claimToken, attempt: 1, started_at: claim!.claimedAt, status_code: 200, error: null, duration_ms: 12 }]);
      expect((await attemptsOf(id!))[0]!.finished_at).toBeInstanceOf(Date);
    });

    it('a sender that records after its lease was taken over: its attempt shows what happened, the delivery stays with the new claim', async () => {
      const target = await receiver();
      const { orgId } = await insertOrganization(db, { webhookUrl: target.url });
      const [id] = await enqueueTestWebhooks(db, orgId);
      // the first sender stalls between its send and its outcome until its lease has expired
      const [first] = await claimDueDeliveries(db, { limit: 10, maxAttempts: 3, leaseMs: 1 });
      const leaseExpired = async () => (await sql<{ expired: boolean }>`select leased_until <= now() as expired from webhook_deliveries where id = ${id}`.execute(db)).rows[0]!.expired;
      await waitUntil(leaseExpired, 5_000, 'the lease to expire');
      const [second] = await claimDueDeliveries(db, { limit: 10, maxAttempts: 3, leaseMs: 60_000 });
      expect(second).toMatchObject({ id, attempt: 2 });
      expect((await attemptsOf(id!)).map((attempt) => [attempt.id, attempt.attempt, attempt.status_code, attempt.error])).toEqual([[first!.claimToken, 1, null, INTERRUPTED_ERROR]]);

      expect(await recordAttemptOutcome(db, first!, { delivered: true, statusCode: 200, error: null, durationMs: 5 }, [10, 10])).toBe('superseded');
      expect((await attemptsOf(id!)).map((attempt) => [attempt.id, attempt.attempt, attempt.status_code, attempt.error])).toEqual([[first!.claimToken, 1, 200, null]]);
      expect(await delivery(id!)).toMatchObject({ status: 'pending', attempts: 2, claim_token: second!.claimToken });

      expect(await recordAttemptOutcome(db, second!, { delivered: true, statusCode: 200, error: null, durationMs: 5 }, [10, 10])).toBe('delivered');
      expect((await attemptsOf(id!)).map((attempt) => [attempt.attempt, attempt.status_code])).toEqual([
        [1, 200],
        [2, 200],
      ]);
    });

    it('fails a delivery whose last allowed attempt was interrupted, without sending it again', async () => {
      const target = await receiver();
      const { orgId } = await insertOrganization(db, { webhookUrl: target.url });
      const [id] = await enqueueTestWebhooks(db, orgId);
      await claimDueDeliveries(db, { limit: 10, maxAttempts: 1, leaseMs: 100 });

      startDispatcher({ retryDelaysMs: [] });
      await waitForStatus(id!, 'failed');
      expect(target.received).toHaveLength(0);
      expect(await delivery(id!)).toMatchObject({ attempts: 1, last_error: INTERRUPTED_ERROR, claim_token: null, next_attempt_at: null });
      expect((await attemptsOf(id!)).map((attempt) => attempt.error)).toEqual([INTERRUPTED_ERROR]);
    });

    it('sends each of 200 deliveries exactly once with two dispatchers running at once', async () => {
      const target = await receiver();
      const { orgId } = await insertOrganization(db, { webhookUrl: target.url });
      const ids = await enqueueTestWebhooks(db, orgId, 200);
      // two "processes": each dispatcher has its own connection pool
      const pools = [createPool(database.config, { max: 5, purpose: 'dispatcher-a' }), createPool(database.config, { max: 5, purpose: 'dispatcher-b' })];
      const ownDatabases = pools.map((pool) => createDatabase(pool));
      cleanups.push(async () => {
        await Promise.all(ownDatabases.map((own) => own.destroy()));
      });
      // each dispatcher's debug log names the attempts it made
      const sentBy = [0, 0];
      const countingLogger = (index: 0 | 1) =>
        createLogger('debug', {}, (line) => {
          if ((JSON.parse(line) as { msg: string }).msg === 'webhooks: attempt') sentBy[index]!++;
        });
      const running = ownDatabases.map((own, index) => startDispatcher({ db: own, concurrency: 16, logger: countingLogger(index as 0 | 1) }));
      await waitUntil(
        async () => (await db.selectFrom('webhook_deliveries').select('id').where('status', '=', 'delivered').execute()).length === 200,
        30_000,
        '200 deliveries',
      );
      // any duplicate send would be in flight now; stopping waits for it
      await Promise.all(running.map((dispatcher) => dispatcher.stop()));

      const counts = new Map<string, number>();
      for (const received of idsReceived(target)) counts.set(String(received), (counts.get(String(received)) ?? 0) + 1);
      expect(target.received).toHaveLength(200);
      expect([...counts.keys()].sort()).toEqual([...ids].sort());
      expect([...counts.values()].every((count) => count === 1)).toBe(true);
      const attempts = await db.selectFrom('webhook_attempts').select(['delivery_id', 'attempt']).execute();
      expect(attempts).toHaveLength(200);
      expect(attempts.every((attempt) => attempt.attempt === 1)).toBe(true);
      // each holds at most 16 in flight, so both took part
      expect(sentBy[0]! + sentBy[1]!).toBe(200);
      expect(sentBy[0]).toBeGreaterThan(0);
      expect(sentBy[1]).toBeGreaterThan(0);
    });
  });

  describe('endpoints', () => {
    const appFor = (orgId: string) => {
      const app = new OpenAPIHono<AppEnv>();
      app.use('*', (c, next) => {
        c.set('principal', { orgId, userId: 'u', via: 'apiKey', username: 'u' });
        return next();
      });
      app.route('/', webhookRoutes({ db }));
      app.onError((error, c) => {
        const apiError = error instanceof ApiError ? error : error instanceof DomainError ? ApiError.fromDomain(error) : null;
        if (apiError) return c.json(apiError.toBody(), apiError.status);
        return c.json({ error: 'INTERNAL_ERROR', message: error.message, statusCode: 500 }, 500);
      });
      return app;
    };

    interface Page {
      deliveries: { id: string; status: string; attempts: number; payload: Record<string, unknown> }[];
      nextCursor: string | null;
    }
    const list = async (orgId: string, query = '') => {
      const response = await appFor(orgId).request(`/webhooks/deliveries${query}`);
      return { status: response.status, body: (await response.json()) as Page };
    };

    it('lists the organization’s deliveries newest first, page by page, filtered by status', async () => {
      const { orgId } = await insertOrganization(db, { webhookUrl: null });
      const ids = await enqueueTestWebhooks(db, orgId, 5);
      await db.updateTable('webhook_deliveries').set({ status: 'failed', next_attempt_at: null, attempts: 6, last_error: 'HTTP 500' }).where('id', '=', ids[1]!).execute();
      const newestFirst = [...ids].reverse();

      const first = await list(orgId, '?limit=2');
      expect(first.status).toBe(200);
      expect(first.body.deliveries.map((item) => item.id)).toEqual(newestFirst.slice(0, 2));
      expect(first.body.nextCursor).toEqual(expect.any(String));
      const second = await list(orgId, `?limit=2&cursor=${first.body.nextCursor}`);
      expect(second.body.deliveries.map((item) => item.id)).toEqual(newestFirst.slice(2, 4));
      const third = await list(orgId, `?limit=2&cursor=${second.body.nextCursor}`);
      expect(third.body.deliveries.map((item) => item.id)).toEqual(newestFirst.slice(4));
      expect(third.body.nextCursor).toBeNull();

      const all = await list(orgId);
      expect(all.body.deliveries).toHaveLength(5);
      expect(all.body.nextCursor).toBeNull();
      const oldest = all.body.deliveries[4] as unknown as Record<string, unknown>;
      expect(oldest).toEqual({
        id: ids[0],
        type: 'deposit.detected',
        status: 'pending',
        attempts: 0,
        // its organization has no webhook URL: it waits, due at no time (CONTRACT §7)
        nextAttemptAt: null,
        lastStatusCode: null,
        lastError: null,
        createdAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
        updatedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
        deliveredAt: null,
        payload: { txnHash: `0x${'0'.repeat(64)}`, amount: '1000', confirmations: 0 },
      });

      const failed = await list(orgId, '?status=failed');
      expect(failed.body.deliveries.map((item) => [item.id, item.status, item.attempts])).toEqual([[ids[1], 'failed', 6]]);
      const pending = await list(orgId, '?status=pending');
      expect(pending.body.deliveries.map((item) => item.id)).toEqual(newestFirst.filter((id) => id !== ids[1]));
      expect((await list(orgId, '?status=delivered')).body).toEqual({ deliveries: [], nextCursor: null });
    });

    it('a delivery’s seq, the lists’ cursor, comes only from its identity: an insert cannot give one, so it stays unique without an index of its own', async () => {
      const { orgId } = await insertOrganization(db, { webhookUrl: null });
      const [id] = await enqueueTestWebhooks(db, orgId, 1);
      const { seq } = await db.selectFrom('webhook_deliveries').select('seq').where('id', '=', id!).executeTakeFirstOrThrow();
      const copy = sql`insert into webhook_deliveries (id, seq, org_id, event_type, dedupe_key, body, event_timestamp, next_attempt_at)
        values (${randomUUID()}, ${seq}, ${orgId}, 'deposit.detected', ${`copy-${randomUUID()}`}, '{}', now(), 'infinity')`;
      await expect(copy.execute(db)).rejects.toThrow(/generated always|GENERATED ALWAYS|cannot insert a non-DEFAULT value/i);
      const { rows } = await sql<{ count: string }>`select count(*)::text as count from webhook_deliveries where seq = ${seq}`.execute(db);
      expect(rows[0]!.count).toBe('1');
    });

    it('answers 400 BAD_REQUEST for an invalid status, limit or cursor', async () => {
      const { orgId } = await insertOrganization(db, { webhookUrl: null });
      for (const query of ['?status=sent', '?limit=0', '?limit=1001', '?limit=abc', '?limit=1.5', '?cursor=nope!', `?cursor=${Buffer.from('d1:abc').toString('base64url')}`]) {
        const response = await appFor(orgId).request(`/webhooks/deliveries${query}`);
        expect(response.status, query).toBe(400);
        expect(((await response.json()) as { error: string }).error, query).toBe('BAD_REQUEST');
      }
    });

    it('keeps organizations apart: another organization neither sees nor redelivers a delivery', async () => {
      const a = await insertOrganization(db, { webhookUrl: null });
      const b = await insertOrganization(db, { webhookUrl: null });
      const [id] = await enqueueTestWebhooks(db, a.orgId);

      expect((await list(b.orgId)).body).toEqual({ deliveries: [], nextCursor: null });
      expect((await list(a.orgId)).body.deliveries.map((item) => item.id)).toEqual([id]);
      for (const target of [id!, randomUUID(), 'not-a-uuid']) {
        const response = await appFor(b.orgId).request(`/webhooks/deliveries/${target}/redeliver`, { method: 'POST' });
        expect(response.status).toBe(404);
        expect(await response.json()).toEqual({ error: 'NOT_FOUND', message: 'No such webhook delivery', statusCode: 404 });
      }
      expect(await delivery(id!)).toMatchObject({ status: 'pending', attempts: 0 });
    });

    it('a redelivery while an attempt is in flight logs that attempt as superseded; its sender, recording later, shows what happened', async () => {
      const target = await receiver();
      const { orgId } = await insertOrganization(db, { webhookUrl: target.url });
      const [id] = await enqueueTestWebhooks(db, orgId);
      const [inFlight] = await claimDueDeliveries(db, { limit: 10, maxAttempts: 3, leaseMs: 60_000 });
      const response = await appFor(orgId).request(`/webhooks/deliveries/${id}/redeliver`, { method: 'POST' });
      expect(response.status).toBe(200);
      expect(await attemptsOf(id!)).toMatchObject([{ id: inFlight!.claimToken, attempt: 1, started_at: inFlight!.claimedAt, status_code: null, error: 'superseded by a redelivery' }]);

      expect(await recordAttemptOutcome(db, inFlight!, { delivered: false, statusCode: 503, error: 'HTTP 503', durationMs: 5 }, [10, 10])).toBe('superseded');
      expect(await attemptsOf(id!)).toMatchObject([{ id: inFlight!.claimToken, attempt: 1, status_code: 503, error: 'HTTP 503' }]);
      expect(await delivery(id!)).toMatchObject({ status: 'pending', attempts: 0, claim_token: null });
    });

    it('redelivers a failed delivery with a fresh schedule and the same id', async () => {
      const target = await receiver(() => 500);
      const { orgId, signingSecret } = await insertOrganization(db, { webhookUrl: target.url });
      const [id] = await enqueueTestWebhooks(db, orgId);
      startDispatcher({ retryDelaysMs: [10] });
      await waitForStatus(id!, 'failed');
      expect(target.received).toHaveLength(2);

      target.script = () => 200;
      const response = await appFor(orgId).request(`/webhooks/deliveries/${id}/redeliver`, { method: 'POST' });
      expect(response.status).toBe(200);
      const { delivery: redelivered } = (await response.json()) as { delivery: Record<string, unknown> };
      expect(redelivered).toMatchObject({ id, status: 'pending', attempts: 0, lastStatusCode: null, lastError: null, deliveredAt: null });
      expect(redelivered.nextAttemptAt).toEqual(expect.any(String));

      await waitForStatus(id!, 'delivered');
      expect(idsReceived(target)).toEqual([id, id, id]);
      const last = target.received[2]!;
      expect(last.headers['x-webhook-signature']).toBe(hmac(signingSecret, last.body));
      expect(await delivery(id!)).toMatchObject({ status: 'delivered', attempts: 1, last_status_code: 200 });
      // the attempts of the first schedule stay for operators
      expect((await attemptsOf(id!)).map((attempt) => [attempt.attempt, attempt.status_code])).toEqual([
        [1, 500],
        [2, 500],
        [1, 200],
      ]);
      const listed = await list(orgId, '?status=delivered');
      expect(listed.body.deliveries.map((item) => [item.id, item.attempts])).toEqual([[id, 1]]);
    });
  });
});
