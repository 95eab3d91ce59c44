import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { lookup } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encryptSecret, secretPurpose } from '../../src/security/secret-box.js';
import { INTERNAL_ADDRESS_ERROR, sendWebhook, WebhookSender } from '../../src/webhooks/send.js';

/** a resolver that answers the loopback address the test receivers listen on for the webhook's host (and notes each call) */
const resolvingToLoopback = (calls: string[] = []) =>
  ((hostname: string, options: unknown, callback: (error: null, address: string | { address: string; family: number }[], family?: number) => void) => {
    expect(hostname).toBe('hooks.example.test');
    calls.push(hostname);
    if ((options as { all?: boolean }).all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
    else callback(null, '127.0.0.1', 4);
  }) as unknown as typeof lookup;

/** a claimed delivery of `orgId` to the webhook host on `port`, signed with a secret sealed under `encryptionKey` */
const claimTo = (port: number, orgId: string, encryptionKey: Buffer) => (id: string) => ({
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

  /** the webhook's host now resolves to the loopback address the receiver listens on */
  const rebound = resolvingToLoopback();
  const claim = (id: string) => claimTo(port, orgId, encryptionKey)(id);

  it('in production: not sent, the error generic', async () => {
    const outcome = await sendWebhook(claim('d-prod'), { encryptionKey, timeoutMs: 5_000, refuseInternalAddresses: true, resolve: rebound });
    expect(outcome).toMatchObject({ delivered: false, statusCode: null, error: INTERNAL_ADDRESS_ERROR });
    expect(received).not.toContain('d-prod');
  });

  it('in production, a sender that keeps its connections still checks the address at each one: a refusal is not remembered as a connection', async () => {
    const sender = new WebhookSender({ encryptionKey, timeoutMs: 5_000, refuseInternalAddresses: true, resolve: rebound });
    try {
      for (const id of ['d-prod-1', 'd-prod-2']) {
        expect(await sender.send(claim(id))).toMatchObject({ delivered: false, statusCode: null, error: INTERNAL_ADDRESS_ERROR });
      }
    } finally {
      await sender.close();
    }
    expect(received).not.toContain('d-prod-1');
    expect(received).not.toContain('d-prod-2');
  });

  it('outside production (local receivers are allowed): sent', async () => {
    const outcome = await sendWebhook(claim('d-dev'), { encryptionKey, timeoutMs: 5_000, refuseInternalAddresses: false, resolve: rebound });
    expect(outcome).toMatchObject({ delivered: true, statusCode: 200 });
    expect(received).toContain('d-dev');
  });
});

/**
 * The resolver runs for every new connection, and only then: the check above cannot be skipped by
 * a connection opened earlier for another request, and a receiver's kept-alive connection serves
 * its next delivery without resolving its host again.
 */
describe('webhook delivery resolves the host for each new connection and reuses kept-alive ones', () => {
  let receiver: Server;
  let port: number;
  const encryptionKey = Buffer.alloc(32, 9);
  const orgId = 'org-connections';
  const held: (() => void)[] = [];
  const remotePorts = new Set<number>();

  beforeAll(async () => {
    // the first request is answered only once the second has arrived: both are then in flight at once, on two connections
    receiver = createServer((request, response) => {
      remotePorts.add(request.socket.remotePort!);
      request.resume();
      request.on('end', () => {
        held.push(() => response.writeHead(200).end());
        if (request.headers['x-webhook-id'] !== 'd-first') for (const answer of held.splice(0)) answer();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    port = (receiver.address() as AddressInfo).port;
  });
  afterAll(async () => {
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  it('two sends at once: two connections, each resolved; a third send reuses one without resolving', async () => {
    const resolved: string[] = [];
    const counting = resolvingToLoopback(resolved);
    const claim = claimTo(port, orgId, encryptionKey);
    const sender = new WebhookSender({ encryptionKey, timeoutMs: 5_000, refuseInternalAddresses: false, resolve: counting });
    try {
      const [first, second] = await Promise.all([sender.send(claim('d-first')), sender.send(claim('d-second'))]);
      expect(first).toMatchObject({ delivered: true, statusCode: 200 });
      expect(second).toMatchObject({ delivered: true, statusCode: 200 });
      expect(remotePorts.size).toBe(2);
      expect(resolved).toEqual(['hooks.example.test', 'hooks.example.test']);
      // a send answers at its response's headers; its connection is free for the next once the (empty) body has ended, in the same read
      await new Promise((resolve) => setImmediate(resolve));
      expect(await sender.send(claim('d-third'))).toMatchObject({ delivered: true, statusCode: 200 });
      expect(remotePorts.size).toBe(2);
      expect(resolved).toHaveLength(2);
    } finally {
      await sender.close();
    }
  });
});
