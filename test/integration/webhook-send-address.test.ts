import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { lookup } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encryptSecret, secretPurpose } from '../../src/security/secret-box.js';
import { INTERNAL_ADDRESS_ERROR, sendWebhook } from '../../src/webhooks/send.js';

/**
 * The webhook URL's host was public when it was set; by send time its DNS answer points inside the
 * service's network (a changed record, DNS rebinding). In production the connection is refused at
 * connect time, and the deliveries list says so in generic words.
 */
describe('webhook delivery checks the resolved address when it connects', () => {
  let receiver: Server;
  let port: number;
  const received: string[] = [];
  const encryptionKey = Buffer.alloc(32, 7);
  const orgId = 'org-dns';

  beforeAll(async () => {
    receiver = createServer((request, response) => {
      received.push(String(request.headers['x-webhook-id']));
      response.writeHead(200).end();
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    port = (receiver.address() as AddressInfo).port;
  });
  afterAll(async () => {
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  /** a resolver whose answer for the webhook's host is now the loopback address the receiver listens on */
  const rebound = ((hostname: string, options: unknown, callback: (error: null, address: string | { address: string; family: number }[], family?: number) => void) => {
    expect(hostname).toBe('hooks.example.test');
    if ((options as { all?: boolean }).all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
    else callback(null, '127.0.0.1', 4);
  }) as unknown as typeof lookup;

  const claim = (id: string) => ({
    id,
    orgId,
    type: 'withdrawal.created',
    body: '{"type":"withdrawal.created","timestamp":"2026-11-24T00:00:00.000Z","payload":{}}',
    eventTimestamp: new Date('2026-11-24T00:00:00.000Z'),
    attempt: 1,
    claimToken: 't',
    claimedAt: new Date('2026-11-24T00:00:00.000Z'),
    webhookUrl: `http://hooks.example.test:${port}/hook`,
    signingSecretEncrypted: encryptSecret(encryptionKey, 'whsec_test', secretPurpose.webhookSigningSecret(orgId)),
  });

  it('in production: not sent, the error generic', async () => {
    const outcome = await sendWebhook(claim('d-prod'), { encryptionKey, timeoutMs: 5_000, refuseInternalAddresses: true, resolve: rebound });
    expect(outcome).toMatchObject({ delivered: false, statusCode: null, error: INTERNAL_ADDRESS_ERROR });
    expect(received).not.toContain('d-prod');
  });

  it('outside production (local receivers are allowed): sent', async () => {
    const outcome = await sendWebhook(claim('d-dev'), { encryptionKey, timeoutMs: 5_000, refuseInternalAddresses: false, resolve: rebound });
    expect(outcome).toMatchObject({ delivered: true, statusCode: 200 });
    expect(received).toContain('d-dev');
  });
});
