import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientSchemaSource, CLIENT_SCHEMA_FILE } from '../../scripts/client-schema.js';
import { startTestService, type TestService } from '../support/api-harness.js';

/**
 * The typed client (ledgergate/client) is generated from the API document: the committed types
 * are exactly what the served document gives, so the server, its document and its clients cannot
 * drift apart. The end-to-end tests (withdrawals-e2e) drive the service through this client.
 */
describe('the typed client', () => {
  it('src/client/schema.ts is what `npm run client:generate` writes from the served document', async () => {
    const committed = await fs.readFile(CLIENT_SCHEMA_FILE, 'utf8');
    expect(committed === (await clientSchemaSource()), 'the API document changed: run `npm run client:generate` and commit src/client/schema.ts').toBe(true);
  });

  describe('against a service', () => {
    let service: TestService;
    let apiKey: string;
    beforeAll(async () => {
      service = await startTestService();
      apiKey = (await service.bootstrap('Acme', ['alice'])).apiKey;
    });
    afterAll(async () => service?.stop());

    it('answers typed data, and the error body of CONTRACT §5 on a refusal', async () => {
      const api = service.client({ apiKey });
      const chains = await api.GET('/chains');
      expect(chains.response.status).toBe(200);
      expect(chains.data!.chains.map((chain) => chain.id)).toContain('eip155:1');

      const missing = await api.GET('/withdrawals/{id}', { params: { path: { id: 'no-such-withdrawal' } } });
      expect(missing.response.status).toBe(404);
      expect(missing.error).toMatchObject({ error: 'WITHDRAWAL_NOT_FOUND', statusCode: 404 });

      const anonymous = await service.client({}).GET('/portfolio');
      expect(anonymous.response.status).toBe(401);
    });

    it('a person signs in and reads the profile with the session the client carries', async () => {
      const [carol] = (await service.bootstrap('Globex', ['carol'])).users;
      let token: string | undefined = undefined;
      const api = service.client({ accessToken: () => token });
      const login = await api.POST('/auth/login', { body: { username: carol!.username, password: carol!.password, totpCode: service.totp(carol!.totpSecret) } });
      expect(login.response.status).toBe(200);
      token = login.data!.accessToken;
      const profile = await api.GET('/auth/profile');
      expect(profile.response.status).toBe(200);
      expect(profile.data).toMatchObject({ username: 'carol' });
    });
  });
});
