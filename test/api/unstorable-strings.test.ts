import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/api-harness.js';

const NUL = 'note\u0000';
const LONE_SURROGATE = 'a\uD800b';
const ETH = 'eip155:1/slip44:60';
const RECIPIENT = '0x8ba1f109551bD432803012645Ac136ddd64DBA72';

/**
 * A string PostgreSQL cannot store (a NUL, a lone UTF-16 surrogate) in any field of any endpoint
 * that takes one: 400 BAD_REQUEST naming the field, and nothing written (the event store's head
 * does not move). Before, a NUL in a withdrawal's note reached jsonb and answered 500.
 */
describe('strings the stores cannot hold are refused at the door', () => {
  let service: TestService;
  let apiKey: string;
  let token: string;
  let withdrawalId: string;

  beforeAll(async () => {
    service = await startTestService({ RATE_LIMIT_PER_MINUTE: '1000000' });
    const acme = await service.bootstrap('Acme', ['alice']);
    apiKey = acme.apiKey;
    token = (await service.login(acme.users[0]!)).body!.accessToken as string;
    const created = await service.request('GET', '/withdrawals', { apiKey });
    withdrawalId = ((created.body as { withdrawals: { id: string }[] }).withdrawals[0]?.id ?? '00000000-0000-4000-8000-000000000000');
  });
  afterAll(async () => {
    await service?.stop();
  });

  const withdrawal = { chainId: 'eip155:1', tokenId: ETH, amount: '1000', recipient: RECIPIENT, reference: 'r-1' };
  type Case = [name: string, method: string, url: () => string, body: (bad: string) => unknown, field: string, credential?: 'token'];
  const cases: Case[] = [
    ['POST /withdrawals internalNote', 'POST', () => '/withdrawals', (bad) => ({ ...withdrawal, internalNote: bad }), 'internalNote'],
    ['POST /withdrawals reference', 'POST', () => '/withdrawals', (bad) => ({ ...withdrawal, reference: bad }), 'reference'],
    ['POST /withdrawals memo', 'POST', () => '/withdrawals', (bad) => ({ ...withdrawal, memo: bad }), 'memo'],
    ['POST /withdrawals externalUserId', 'POST', () => '/withdrawals', (bad) => ({ ...withdrawal, externalUserId: bad }), 'externalUserId'],
    ['PATCH /organisation/webhook webhookUrl', 'PATCH', () => '/organisation/webhook', (bad) => ({ webhookUrl: `https://example.com/${bad}` }), 'webhookUrl'],
    ['POST /auth/login username', 'POST', () => '/auth/login', (bad) => ({ username: bad, password: 'x', totpCode: '123456' }), 'username'],
    ['POST /withdrawals/{id}/approve totpCode', 'POST', () => `/withdrawals/${withdrawalId}/approve`, (bad) => ({ totpCode: bad }), 'totpCode', 'token'],
    ['POST /devnet/deposits toAddress', 'POST', () => '/devnet/deposits', (bad) => ({ chainId: 'eip155:1', tokenId: ETH, toAddress: bad, amount: '1' }), 'toAddress'],
  ];
  const queries: [name: string, url: (bad: string) => string, field: string][] = [
    ['GET /payments/deposit-address userId', (bad) => `/payments/deposit-address?chainId=eip155:1&tokenId=${encodeURIComponent(ETH)}&userId=${encodeURIComponent(bad)}`, 'userId'],
    ['GET /payments userId', (bad) => `/payments?userId=${encodeURIComponent(bad)}`, 'userId'],
    ['GET /payments/{userId}/deposits', (bad) => `/payments/${encodeURIComponent(bad)}/deposits`, 'userId'],
    ['GET /withdrawals/{id}', (bad) => `/withdrawals/${encodeURIComponent(bad)}`, 'id'],
    ['DELETE /withdrawals/{id}', (bad) => `/withdrawals/${encodeURIComponent(bad)}`, 'id'],
    ['GET /withdrawals/{id}/history', (bad) => `/withdrawals/${encodeURIComponent(bad)}/history`, 'id'],
    ['GET /chains/{id}', (bad) => `/chains/${encodeURIComponent(bad)}`, 'id'],
    ['GET /tokens chainId', (bad) => `/tokens?chainId=${encodeURIComponent(bad)}`, 'chainId'],
  ];

  const head = () => service.infrastructure.store.headPosition();

  const withBadStrings = cases.flatMap(([name, ...rest]): [string, string, ...typeof rest][] => [
    [`${name} with a NUL`, NUL, ...rest],
    [`${name} with a lone surrogate`, LONE_SURROGATE, ...rest],
  ]);
  it.each(withBadStrings)(
    '%s: 400 BAD_REQUEST naming the field, nothing written',
    async (_name, bad, method, url, body, field, credential) => {
      const before = await head();
      const response = await service.request(method, url(), { ...(credential === 'token' ? { token } : { apiKey }), body: body(bad) });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ error: 'BAD_REQUEST', statusCode: 400, details: { issues: expect.arrayContaining([expect.objectContaining({ path: field })]) } });
      expect(await head()).toBe(before);
    },
  );

  it.each(queries.map(([name, url, field]) => [name, url(NUL), field] as const))('%s with a NUL (%%00): 400 BAD_REQUEST naming the parameter, never a 500', async (name, url, field) => {
    const before = await head();
    const response = await service.request(name.startsWith('DELETE') ? 'DELETE' : 'GET', url, { apiKey });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ error: 'BAD_REQUEST', details: { issues: expect.arrayContaining([expect.objectContaining({ path: field })]) } });
    expect(await head()).toBe(before);
  });

  it.each(queries.map(([name, url]) => [name, url('x').replace(/x(?=[&/]|$)/, '%ED%A0%80')] as const))('%s with bytes that are no UTF-8 (a surrogate, %%ED%%A0%%80): answered, never a 500', async (name, url) => {
    const response = await service.request(name.startsWith('DELETE') ? 'DELETE' : 'GET', url, { apiKey });
    expect(response.status).toBeLessThan(500);
  });
});
