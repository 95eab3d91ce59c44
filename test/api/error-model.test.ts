import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/api-harness.js';

describe('error model (CONTRACT §5): bad input gets a clear 4xx and changes nothing', () => {
  let service: TestService;
  let apiKey: string;

  beforeAll(async () => {
    service = await startTestService();
    apiKey = (await service.bootstrap('Acme', ['alice', 'bob'])).apiKey;
  });
  afterAll(async () => service.stop());

  const organisation = async () => (await service.request('GET', '/organisation', { apiKey })).body;

  it('answers malformed JSON with 400 BAD_REQUEST', async () => {
    const response = await service.request('PATCH', '/organisation/webhook', { apiKey, body: '{"webhookUrl": "https://x.example"' });
    expect(response).toMatchObject({ status: 400, body: { error: 'BAD_REQUEST', statusCode: 400, message: 'Malformed JSON in request body' } });
  });

  it('answers a body that is not JSON with 400 BAD_REQUEST', async () => {
    const response = await service.request('PATCH', '/organisation/min-withdrawal-signers', {
      apiKey,
      body: 'minWithdrawalSigners=2',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(response).toMatchObject({ status: 400, body: { error: 'BAD_REQUEST', statusCode: 400 } });
    const textLogin = await service.request('POST', '/auth/login', { body: 'hello', headers: { 'content-type': 'text/plain' } });
    expect(textLogin).toMatchObject({ status: 400, body: { error: 'BAD_REQUEST' } });
  });

  it('refuses unknown fields (a typo must not pass silently), listing them', async () => {
    const response = await service.request('PATCH', '/organisation/min-withdrawal-signers', { apiKey, body: { minWithdrawalSigners: 2, minWithdrawlSigners: 2 } });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ error: 'BAD_REQUEST', statusCode: 400, details: { issues: [expect.objectContaining({ code: 'unrecognized_keys' })] } });
    expect(await organisation()).toMatchObject({ minWithdrawalSigners: 1 });
  });

  it('answers wrong types and missing bodies with 400 and details.issues', async () => {
    for (const body of [{ webhookUrl: 42 }, {}, [], null]) {
      const response = await service.request('PATCH', '/organisation/webhook', { apiKey, body: JSON.stringify(body) });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ error: 'BAD_REQUEST', statusCode: 400 });
      expect((response.body?.details as { issues: unknown[] }).issues.length).toBeGreaterThan(0);
    }
    const noBody = await service.request('PATCH', '/organisation/webhook', { apiKey });
    expect(noBody).toMatchObject({ status: 400, body: { error: 'BAD_REQUEST' } });
  });

  it('answers bodies over 64 KiB with 413 PAYLOAD_TOO_LARGE', async () => {
    const response = await service.request('PATCH', '/organisation/webhook', { apiKey, body: { webhookUrl: `https://x.example/${'a'.repeat(70_000)}` } });
    expect(response).toMatchObject({ status: 413, body: { error: 'PAYLOAD_TOO_LARGE', statusCode: 413 } });
    const login = await service.request('POST', '/auth/login', { body: 'x'.repeat(65 * 1024) });
    expect(login.status).toBe(413);
  });

  it('answers unknown routes with 404 NOT_FOUND, with or without credentials; a known one with another method 405', async () => {
    expect(await service.request('GET', '/nothing/here')).toMatchObject({ status: 404, body: { error: 'NOT_FOUND', statusCode: 404 } });
    const wrongMethod = await service.request('DELETE', '/organisation', { apiKey });
    expect(wrongMethod).toMatchObject({ status: 405, body: { error: 'METHOD_NOT_ALLOWED' } });
    expect(wrongMethod.headers.get('allow')).toBe('GET, HEAD');
  });

  it('never answers 5xx to a battery of hostile inputs, and nothing changes', async () => {
    const before = await organisation();
    const bodies = ['', '{', '[]', '"x"', 'null', '{"webhookUrl":null}', '{"webhookUrl":{"$ne":1}}', '{"__proto__":{"x":1}}', '\u0000', '{"webhookUrl":"https://\u0000"}'];
    for (const path of ['/organisation/webhook', '/organisation/min-withdrawal-signers', '/auth/login']) {
      for (const body of bodies) {
        const response = await service.request(path === '/auth/login' ? 'POST' : 'PATCH', path, { apiKey, body });
        expect(response.status, `${path} ${JSON.stringify(body)}`).toBeGreaterThanOrEqual(400);
        expect(response.status, `${path} ${JSON.stringify(body)}`).toBeLessThan(500);
        expect(Object.keys(response.body ?? {}).sort()).toEqual(expect.arrayContaining(['error', 'message', 'statusCode']));
      }
    }
    expect(await organisation()).toEqual(before);
  });
});

describe('rate limiting (CONTRACT §1, §3)', () => {
  let service: TestService;
  let bootstrapped: Awaited<ReturnType<TestService['bootstrap']>>;

  beforeAll(async () => {
    service = await startTestService({ RATE_LIMIT_PER_MINUTE: '5', LOGIN_RATE_LIMIT_PER_MINUTE: '3' });
    bootstrapped = await service.bootstrap('Acme', ['alice']);
  });
  afterAll(async () => service.stop());

  it('answers a burst over the limit with 429 RATE_LIMITED and Retry-After in whole seconds', async () => {
    const responses = await Promise.all(Array.from({ length: 8 }, () => service.request('GET', '/organisation', { apiKey: bootstrapped.apiKey })));
    expect(responses.filter((response) => response.status === 200)).toHaveLength(5);
    const limited = responses.filter((response) => response.status === 429);
    expect(limited).toHaveLength(3);
    for (const response of limited) {
      expect(response.body).toMatchObject({ error: 'RATE_LIMITED', statusCode: 429 });
      expect(response.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    }
  });

  it('limits repeated failed logins per username, even with the right password afterwards', async () => {
    const user = bootstrapped.users[0]!;
    for (let attempt = 0; attempt < 3; attempt++) {
      const wrong = await service.request('POST', '/auth/login', { body: { username: 'alice', password: 'wrong', totpCode: '000000' } });
      expect(wrong.status).toBe(401);
    }
    const blocked = await service.request('POST', '/auth/login', { body: { username: 'ALICE', password: user.password, totpCode: service.totp(user.totpSecret) } });
    expect(blocked).toMatchObject({ status: 429, body: { error: 'RATE_LIMITED' } });
    expect(blocked.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
  });

  it('limits failed logins of a username nobody has the same way (401, then 429: no username oracle)', async () => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const wrong = await service.request('POST', '/auth/login', { body: { username: 'nobody-here', password: 'wrong', totpCode: '000000' } });
      expect(wrong).toMatchObject({ status: 401, body: { error: 'UNAUTHORIZED', message: 'Invalid username or password' } });
    }
    const blocked = await service.request('POST', '/auth/login', { body: { username: 'NOBODY-HERE', password: 'wrong', totpCode: '000000' } });
    expect(blocked).toMatchObject({ status: 429, body: { error: 'RATE_LIMITED' } });
  });
});
