import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/api-harness.js';
import { fundGasWallet, fundLedger, stopWithdrawalProcessors } from '../support/withdrawals.js';

const ETH = 'eip155:1/slip44:60';
const RECIPIENT = '0x8ba1f109551bD432803012645Ac136ddd64DBA72';
const AMOUNT = 1_000_000_000_000_000n;

/**
 * Served by Node's HTTP server (as `ledgergate serve` does), request bodies are read from Node's
 * own request stream, not through a web Request (src/api/middleware/body.ts). The other API tests
 * drive the app through app.request; these send real HTTP.
 */
describe('request bodies over Node’s HTTP server', () => {
  let service: TestService;
  let server: ServerType;
  let base: string;
  let apiKey: string;
  let orgId: string;

  beforeAll(async () => {
    service = await startTestService({ DEVNET_BLOCK_TIME_MS: '3600000' });
    await stopWithdrawalProcessors(service);
    server = await new Promise<ServerType>((resolve) => {
      const started = serve({ fetch: service.app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(started));
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const created = await service.bootstrap('bodies', ['bodies-initiator'], { minWithdrawalSigners: 1 });
    apiKey = created.apiKey;
    orgId = created.organization.id;
    await fundLedger(service, orgId, 'eip155:1', 10n * AMOUNT);
    await fundGasWallet(service, apiKey, orgId, 'eip155:1', 10n ** 16n);
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await service.stop();
  });

  const post = async (path: string, body: string | ReadableStream<Uint8Array>, headers: Record<string, string> = {}) => {
    const response = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': apiKey, ...headers }, body, ...(body instanceof ReadableStream ? { duplex: 'half' } : {}) });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : null };
  };
  const withdrawal = (reference: string) => ({ chainId: 'eip155:1', tokenId: ETH, amount: AMOUNT.toString(), recipient: RECIPIENT, reference });
  /** a body sent in chunks, with no Content-Length (Transfer-Encoding: chunked) */
  const chunked = (text: string, chunkSize = 8192) =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        const bytes = new TextEncoder().encode(text);
        for (let offset = 0; offset < bytes.length; offset += chunkSize) controller.enqueue(bytes.subarray(offset, offset + chunkSize));
        controller.close();
      },
    });

  it('creates a withdrawal from a JSON body, whether it comes with a length, in chunks or after a byte-order mark', async () => {
    const withLength = await post('/withdrawals', JSON.stringify(withdrawal('node-1')));
    expect(withLength).toMatchObject({ status: 201, body: { withdrawal: { reference: 'node-1', amount: AMOUNT.toString(), recipient: RECIPIENT, status: 'Pending' } } });
    const inChunks = await post('/withdrawals', chunked(JSON.stringify(withdrawal('node-2')), 16));
    expect(inChunks).toMatchObject({ status: 201, body: { withdrawal: { reference: 'node-2' } } });
    const withMark = await post('/withdrawals', `\uFEFF${JSON.stringify(withdrawal('node-3'))}`);
    expect(withMark).toMatchObject({ status: 201, body: { withdrawal: { reference: 'node-3' } } });
  });

  it('answers malformed JSON and a body that is not JSON with 400 BAD_REQUEST, creating nothing', async () => {
    expect(await post('/withdrawals', '{"chainId": "eip155:1"')).toMatchObject({ status: 400, body: { error: 'BAD_REQUEST', message: 'Malformed JSON in request body' } });
    expect(await post('/withdrawals', 'chainId=eip155:1', { 'content-type': 'application/x-www-form-urlencoded' })).toMatchObject({ status: 400, body: { error: 'BAD_REQUEST' } });
    expect(await post('/withdrawals', '')).toMatchObject({ status: 400, body: { error: 'BAD_REQUEST' } });
  });

  it('refuses a body over 64 KiB with 413 PAYLOAD_TOO_LARGE, by its length or as its chunks arrive, and serves the next request on the same server', async () => {
    const large = JSON.stringify({ ...withdrawal('too-large'), memo: 'x'.repeat(70_000) });
    expect(await post('/withdrawals', large)).toMatchObject({ status: 413, body: { error: 'PAYLOAD_TOO_LARGE', statusCode: 413 } });
    expect(await post('/withdrawals', chunked(large))).toMatchObject({ status: 413, body: { error: 'PAYLOAD_TOO_LARGE' } });
    expect(await post('/auth/login', 'x'.repeat(65 * 1024), { 'x-api-key': '' })).toMatchObject({ status: 413 });
    expect(await post('/withdrawals', JSON.stringify(withdrawal('after-413')))).toMatchObject({ status: 201 });
    const references = (await service.request('GET', '/withdrawals?limit=100', { apiKey })).body as { withdrawals?: { reference: string }[] } | null;
    expect(references?.withdrawals?.some(({ reference }) => reference === 'too-large') ?? false).toBe(false);
  });

  it('lets the devnet’s deposit batch past 64 KiB (its own bound is 1 MiB)', async () => {
    const transfers = Array.from({ length: 600 }, () => ({ chainId: 'eip155:1', tokenId: ETH, toAddress: RECIPIENT, amount: 'not a number' }));
    const response = await post('/devnet/deposits', JSON.stringify({ transfers }));
    expect(JSON.stringify({ transfers }).length).toBeGreaterThan(64 * 1024);
    // read whole and checked: the amounts are refused, not the size
    expect(response).toMatchObject({ status: 400, body: { error: 'INVALID_AMOUNT' } });
  });
});
