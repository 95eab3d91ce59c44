import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueWebhook, webhookDedupeKey } from '../../src/webhooks/outbox.js';
import { startTestService, type TestService } from '../support/api-harness.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

/** The dispatcher and the deliveries endpoints as the running service composes them. */
describe('webhooks in the composed service', () => {
  let service: TestService;
  let receiver: WebhookReceiver;
  let acme: Awaited<ReturnType<TestService['bootstrap']>>;

  beforeAll(async () => {
    service = await startTestService();
    receiver = await startWebhookReceiver(() => 200);
    acme = await service.bootstrap('Acme', ['alice']);
    const set = await service.request('PATCH', '/organisation/webhook', { apiKey: acme.apiKey, body: { webhookUrl: receiver.url } });
    expect(set.status).toBe(200);
  });
  afterAll(async () => {
    await service.stop();
    await receiver.close();
  });

  it('delivers what a projection puts in the outbox, signed with the organization’s current secret', async () => {
    const rotated = await service.request('PATCH', '/organisation/webhook/signing-secret', { apiKey: acme.apiKey });
    const secret = String(rotated.body?.webhookSigningSecret);
    await service.infrastructure.db.transaction().execute((trx) =>
      enqueueWebhook(trx, {
        orgId: acme.organization.id,
        type: 'account.created',
        payload: { orgId: acme.organization.id, externalUserId: 'user-1' },
        timestamp: new Date('2026-11-22T10:00:00.000Z'),
        dedupeKey: webhookDedupeKey(acme.organization.id, 'account.created', 'event-1'),
      }),
    );
    await receiver.waitForRequests(1);
    const [webhook] = receiver.received;
    expect(webhook!.headers['x-webhook-signature']).toBe(createHmac('sha256', secret).update(webhook!.body).digest('hex'));
    expect(webhook!.headers['x-signature']).toBe(webhook!.headers['x-webhook-signature']);
    expect(JSON.parse(webhook!.body.toString())).toEqual({
      type: 'account.created',
      timestamp: '2026-11-22T10:00:00.000Z',
      payload: { orgId: acme.organization.id, externalUserId: 'user-1' },
    });

    let listed = await service.request('GET', '/webhooks/deliveries?status=delivered', { apiKey: acme.apiKey });
    for (let tries = 0; (listed.body?.deliveries as unknown[]).length === 0 && tries < 100; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      listed = await service.request('GET', '/webhooks/deliveries?status=delivered', { apiKey: acme.apiKey });
    }
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ deliveries: [{ id: webhook!.headers['x-webhook-id'], type: 'account.created', status: 'delivered', attempts: 1 }], nextCursor: null });
    expect((await service.request('GET', '/webhooks/deliveries')).status).toBe(401);
  });
});
