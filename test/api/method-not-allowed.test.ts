import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/api-harness.js';

describe('a known path asked with a method it does not have: 405 with Allow, not 404', () => {
  let service: TestService;
  let apiKey: string;

  beforeAll(async () => {
    service = await startTestService();
    apiKey = (await service.bootstrap('Acme', ['alice'])).apiKey;
  });
  afterAll(async () => {
    await service?.stop();
  });

  it.each([
    ['PUT', '/withdrawals', 'GET, HEAD, POST'],
    ['PATCH', '/withdrawals/0f4c6a0e-7d0b-4a8e-9f43-2b6f1c0d9a11', 'DELETE, GET, HEAD'],
    ['POST', '/chains', 'GET, HEAD'],
    ['POST', '/organisation', 'GET, HEAD'],
    ['DELETE', '/healthz', 'GET, HEAD'],
  ])('%s %s → 405, Allow: %s', async (method, path, allow) => {
    const response = await service.request(method, path, { apiKey });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe(allow);
    expect(response.body).toMatchObject({ error: 'METHOD_NOT_ALLOWED', statusCode: 405 });
  });

  it('an unknown path is still 404 NOT_FOUND', async () => {
    expect(await service.request('GET', '/nowhere', { apiKey })).toMatchObject({ status: 404, body: { error: 'NOT_FOUND' } });
  });
});
