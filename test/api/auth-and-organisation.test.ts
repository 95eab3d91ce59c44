import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../src/security/totp.js';
import { startTestService, type TestService } from '../support/api-harness.js';

type Bootstrapped = Awaited<ReturnType<TestService['bootstrap']>>;

describe('authentication and the organization endpoints (SPEC §4.1, §4.2, §5; CONTRACT §2, §3)', () => {
  let service: TestService;
  let acme: Bootstrapped;
  let globex: Bootstrapped;

  beforeAll(async () => {
    service = await startTestService();
    acme = await service.bootstrap('Acme', ['alice', 'bob']);
    globex = await service.bootstrap('Globex', ['gina']);
  });
  afterAll(async () => service.stop());

  const alice = () => acme.users[0]!;

  it('bootstrap → login with TOTP → profile → rotate key: old key INVALID_API_KEY, new key works', async () => {
    const before = await service.request('GET', '/organisation', { apiKey: acme.apiKey });
    expect(before.status).toBe(200);

    const login = await service.login(alice());
    expect(login.status).toBe(200);
    const token = String(login.body?.accessToken);
    expect(token.split('.')).toHaveLength(3);

    const profile = await service.request('GET', '/auth/profile', { token });
    expect(profile).toMatchObject({ status: 200, body: { id: alice().id, username: 'alice', org: { id: acme.organization.id, name: 'Acme' } } });

    const rotated = await service.request('PATCH', '/organisation/api-key', { token });
    expect(rotated.status).toBe(200);
    const newKey = String(rotated.body?.apiKey);
    expect(newKey).not.toBe(acme.apiKey);

    const old = await service.request('GET', '/organisation', { apiKey: acme.apiKey });
    expect(old).toMatchObject({ status: 401, body: { error: 'INVALID_API_KEY', statusCode: 401 } });
    const fresh = await service.request('GET', '/organisation', { apiKey: newKey });
    expect(fresh).toMatchObject({ status: 200, body: { id: acme.organization.id } });
    acme = { ...acme, apiKey: newKey };
  });

  it('GET /organisation answers the organization object, with the signing secret', async () => {
    const response = await service.request('GET', '/organisation', { apiKey: acme.apiKey });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: acme.organization.id,
      name: 'Acme',
      webhookUrl: null,
      webhookSigningSecret: acme.webhookSigningSecret,
      minWithdrawalSigners: 1,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updatedAt: expect.stringMatching(/Z$/),
    });
  });

  it('refuses a TOTP code that was already used, even by two logins at once', async () => {
    const code = totpCode(alice().totpSecret, service.now());
    const body = { username: 'alice', password: alice().password, totpCode: code };
    const [first, second] = await Promise.all([
      service.request('POST', '/auth/login', { body }),
      service.request('POST', '/auth/login', { body }),
    ]);
    expect([first.status, second.status].sort()).toEqual([200, 401]);
    const again = await service.request('POST', '/auth/login', { body });
    expect(again).toEqual({
      status: 401,
      headers: expect.anything(),
      body: { error: 'INVALID_TOTP', message: 'This code was already used; wait for the next one', statusCode: 401 },
    });
    service.advance(30_000);
  });

  it('refuses a wrong TOTP with INVALID_TOTP and a wrong password with UNAUTHORIZED', async () => {
    const wrongCode = await service.request('POST', '/auth/login', { body: { username: 'bob', password: acme.users[1]!.password, totpCode: '000000' } });
    expect(wrongCode).toMatchObject({ status: 401, body: { error: 'INVALID_TOTP', statusCode: 401 } });
    const wrongPassword = await service.request('POST', '/auth/login', {
      body: { username: 'bob', password: 'not-it', totpCode: totpCode(acme.users[1]!.totpSecret, service.now()) },
    });
    expect(wrongPassword).toMatchObject({ status: 401, body: { error: 'UNAUTHORIZED', message: 'Invalid username or password', statusCode: 401 } });
    const unknownUser = await service.request('POST', '/auth/login', { body: { username: 'nobody', password: 'x', totpCode: '123456' } });
    expect(unknownUser).toMatchObject({ status: 401, body: { error: 'UNAUTHORIZED', message: 'Invalid username or password' } });
  });

  it('answers 400 BAD_REQUEST naming each missing login field', async () => {
    const response = await service.request('POST', '/auth/login', { body: { username: 'alice' } });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ error: 'BAD_REQUEST', statusCode: 400 });
    const paths = (response.body?.details as { issues: { path: string }[] }).issues.map((issue) => issue.path).sort();
    expect(paths).toEqual(['password', 'totpCode']);
  });

  it('refuses an expired or tampered JWT with INVALID_TOKEN', async () => {
    const login = await service.login(acme.users[1]!);
    const token = String(login.body?.accessToken);
    const [header, payload, signature] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...claims, org: globex.organization.id })).toString('base64url');
    const tampered = await service.request('GET', '/auth/profile', { token: `${header}.${forged}.${signature}` });
    expect(tampered).toMatchObject({ status: 401, body: { error: 'INVALID_TOKEN', statusCode: 401 } });

    const noneAlg = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${payload}.`;
    expect((await service.request('GET', '/auth/profile', { token: noneAlg })).body).toMatchObject({ error: 'INVALID_TOKEN' });

    const otherKey = await new SignJWT({ org: acme.organization.id })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(acme.users[1]!.id)
      .setIssuer('ledgergate')
      .setAudience('ledgergate-api')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(new Uint8Array(32));
    expect((await service.request('GET', '/auth/profile', { token: otherKey })).body).toMatchObject({ error: 'INVALID_TOKEN' });

    expect((await service.request('GET', '/auth/profile', { token })).status).toBe(200);
    service.advance(3_601_000);
    const expired = await service.request('GET', '/auth/profile', { token });
    expect(expired).toMatchObject({ status: 401, body: { error: 'INVALID_TOKEN', statusCode: 401 } });
  });

  it('refuses an API key where only a person may act: 403 FORBIDDEN', async () => {
    for (const [method, url] of [
      ['GET', '/auth/profile'],
      ['PATCH', '/organisation/api-key'],
    ] as const) {
      const response = await service.request(method, url, { apiKey: acme.apiKey });
      expect(response).toMatchObject({ status: 403, body: { error: 'FORBIDDEN', statusCode: 403 } });
    }
  });

  it('answers 401 UNAUTHORIZED without credentials and INVALID_API_KEY for a malformed or unknown key', async () => {
    expect(await service.request('GET', '/organisation')).toMatchObject({ status: 401, body: { error: 'UNAUTHORIZED', statusCode: 401 } });
    for (const apiKey of ['nonsense', `lgk_${'0'.repeat(24)}_${'A'.repeat(43)}`, acme.apiKey.slice(0, -1) + (acme.apiKey.endsWith('A') ? 'B' : 'A')]) {
      expect(await service.request('GET', '/organisation', { apiKey })).toMatchObject({ status: 401, body: { error: 'INVALID_API_KEY' } });
    }
    expect(await service.request('GET', '/organisation', { headers: { authorization: 'Basic abc' } })).toMatchObject({
      status: 401,
      body: { error: 'INVALID_TOKEN' },
    });
  });

  it('sets the webhook URL, refusing what is not HTTPS with INVALID_WEBHOOK_URL and changing nothing', async () => {
    for (const webhookUrl of ['http://example.com/hook', 'ftp://example.com', 'not a url', 'https://user:pw@example.com/x', 'http://10.0.0.1/x']) {
      const refused = await service.request('PATCH', '/organisation/webhook', { apiKey: acme.apiKey, body: { webhookUrl } });
      expect(refused).toMatchObject({ status: 400, body: { error: 'INVALID_WEBHOOK_URL', statusCode: 400 } });
    }
    expect((await service.request('GET', '/organisation', { apiKey: acme.apiKey })).body).toMatchObject({ webhookUrl: null });
    const set = await service.request('PATCH', '/organisation/webhook', { apiKey: acme.apiKey, body: { webhookUrl: 'https://hooks.acme.example/ledgergate' } });
    expect(set).toMatchObject({ status: 200, body: {} });
    expect((await service.request('GET', '/organisation', { apiKey: acme.apiKey })).body).toMatchObject({ webhookUrl: 'https://hooks.acme.example/ledgergate' });
    const local = await service.request('PATCH', '/organisation/webhook', { apiKey: acme.apiKey, body: { webhookUrl: 'http://127.0.0.1:9999/hook' } });
    expect(local.status).toBe(200);
  });

  it('rotates the signing secret: GET /organisation shows the new one', async () => {
    const rotated = await service.request('PATCH', '/organisation/webhook/signing-secret', { apiKey: acme.apiKey });
    expect(rotated.status).toBe(200);
    const secret = String(rotated.body?.webhookSigningSecret);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(secret).not.toBe(acme.webhookSigningSecret);
    expect((await service.request('GET', '/organisation', { apiKey: acme.apiKey })).body).toMatchObject({ webhookSigningSecret: secret });
  });

  it('sets minWithdrawalSigners between 1 and the number of users, else INVALID_MIN_SIGNERS', async () => {
    for (const minWithdrawalSigners of [0, 3, 1.5, -2]) {
      const refused = await service.request('PATCH', '/organisation/min-withdrawal-signers', { apiKey: acme.apiKey, body: { minWithdrawalSigners } });
      expect(refused).toMatchObject({ status: 422, body: { error: 'INVALID_MIN_SIGNERS', statusCode: 422, details: { signers: 2 } } });
    }
    const wrongType = await service.request('PATCH', '/organisation/min-withdrawal-signers', { apiKey: acme.apiKey, body: { minWithdrawalSigners: '2' } });
    expect(wrongType).toMatchObject({ status: 400, body: { error: 'BAD_REQUEST' } });
    expect((await service.request('GET', '/organisation', { apiKey: acme.apiKey })).body).toMatchObject({ minWithdrawalSigners: 1 });
    const set = await service.request('PATCH', '/organisation/min-withdrawal-signers', { apiKey: acme.apiKey, body: { minWithdrawalSigners: 2 } });
    expect(set).toMatchObject({ status: 200, body: {} });
    expect((await service.request('GET', '/organisation', { apiKey: acme.apiKey })).body).toMatchObject({ minWithdrawalSigners: 2 });
  });

  it('isolates tenants: Globex credentials never see or change Acme', async () => {
    const globexLogin = await service.login(globex.users[0]!);
    const token = String(globexLogin.body?.accessToken);
    const viaKey = await service.request('GET', '/organisation', { apiKey: globex.apiKey });
    const viaToken = await service.request('GET', '/organisation', { token });
    expect(viaKey.body).toMatchObject({ id: globex.organization.id, name: 'Globex' });
    expect(viaToken.body).toMatchObject({ id: globex.organization.id });
    expect(JSON.stringify([viaKey.body, viaToken.body])).not.toContain(acme.organization.id);
    await service.request('PATCH', '/organisation/webhook', { apiKey: globex.apiKey, body: { webhookUrl: 'https://globex.example/h' } });
    await service.request('PATCH', '/organisation/webhook/signing-secret', { token });
    const acmeAfter = await service.request('GET', '/organisation', { apiKey: acme.apiKey });
    expect(acmeAfter.body).toMatchObject({ id: acme.organization.id, webhookUrl: 'http://127.0.0.1:9999/hook', minWithdrawalSigners: 2 });
    const profile = await service.request('GET', '/auth/profile', { token });
    expect(profile.body).toMatchObject({ username: 'gina', org: { id: globex.organization.id, name: 'Globex' } });
  });
});
