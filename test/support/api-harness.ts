import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createLedgergateClient } from 'ledgergate/client';
import { bootstrapOrganization } from '../../src/application/organizations.js';
import { waitForProjection } from '../../src/application/projection-waiter.js';
import { loadConfig } from '../../src/config/env.js';
import { connectInfrastructure } from '../../src/infrastructure.js';
import { createLogger } from '../../src/log.js';
import { ORGANIZATIONS_PROJECTION } from '../../src/projections/organizations.js';
import { totpCode } from '../../src/security/totp.js';
import { composeService } from '../../src/server.js';
import { createTestDatabase } from './database.js';

/**
 * Every error body names its request (details.requestId, the x-request-id header): checked here for
 * every error any test meets, then left out, so tests compare the rest of the body as it was.
 */
const withoutRequestId = (body: Record<string, unknown>, headers: Headers): Record<string, unknown> => {
  if (typeof body.error !== 'string' || typeof body.statusCode !== 'number') return body;
  const { requestId, ...details } = (body.details ?? {}) as Record<string, unknown>;
  if (requestId !== headers.get('x-request-id')) throw new Error(`error body without its request id: ${JSON.stringify(body)}`);
  const { details: _details, ...rest } = body;
  return Object.keys(details).length > 0 ? { ...rest, details } : rest;
};

export type TestService = Awaited<ReturnType<typeof startTestService>>;

/**
 * The whole service over a fresh test database, driven through app.request (no socket), with a
 * clock the test moves: TOTP steps and token expiry without waiting.
 */
export const startTestService = async (env: Record<string, string> = {}, options: { captureLogs?: boolean } = {}) => {
  const database = await createTestDatabase('api');
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ledgergate-api-'));
  const config = loadConfig({ DATA_DIR: dataDir, LEDGERGATE_SECRET_KEY: randomBytes(32).toString('base64'), LOG_LEVEL: 'silent', ...env });
  /** every log line of the run, at debug level, when asked (tests grep them for secrets) */
  const logLines: string[] = [];
  const logger = options.captureLogs ? createLogger('debug', {}, (line) => logLines.push(line)) : createLogger('silent');
  const infrastructure = await connectInfrastructure(database.config, config, logger, 'test', async () => {
    await database.drop();
    await fs.rm(dataDir, { recursive: true, force: true });
  });
  let now = new Date('2026-11-22T10:00:00.000Z');
  const service = composeService(infrastructure, config, logger, () => now);
  await service.startWorkers();

  const request = async (method: string, url: string, options: { body?: unknown; apiKey?: string; token?: string; headers?: Record<string, string> } = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.body !== undefined) headers['content-type'] ??= 'application/json';
    if (options.apiKey) headers['x-api-key'] = options.apiKey;
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    const response = await service.app.request(url, {
      method,
      headers,
      body: options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body),
    });
    const text = await response.text();
    const body = text ? (JSON.parse(text) as Record<string, unknown>) : null;
    return { status: response.status, headers: response.headers, body: body && withoutRequestId(body, response.headers) };
  };

  return {
    app: service.app,
    /** the package's typed client (ledgergate/client) over this app: what an integrator would write */
    client: (credentials: { apiKey?: string; accessToken?: () => string | undefined }) =>
      createLedgergateClient({ baseUrl: 'http://ledgergate.test', ...credentials, fetch: async (request) => service.app.request(request) }),
    services: service.services,
    /** everything composeService made: devnet, gateways, organization wallets, workers */
    composed: service,
    logLines,
    dataDir,
    infrastructure,
    request,
    now: () => now,
    advance: (ms: number) => (now = new Date(now.getTime() + ms)),
    /** an organization through the same code as `ledgergate bootstrap`, visible to the API when it returns */
    bootstrap: async (name: string, usernames: string[], options: { minWithdrawalSigners?: number } = {}) => {
      const result = await bootstrapOrganization(service.services, { name, usernames, ...options }, { actor: 'test' });
      await waitForProjection(infrastructure.db, ORGANIZATIONS_PROJECTION, result.position);
      return result;
    },
    totp: (secret: string) => totpCode(secret, now),
    login: async (user: { username: string; password: string; totpSecret: string }) => {
      const response = await request('POST', '/auth/login', { body: { username: user.username, password: user.password, totpCode: totpCode(user.totpSecret, now) } });
      now = new Date(now.getTime() + 30_000); // the next login needs the next code
      return response;
    },
    stopWorkers: () => service.stopWorkers(),
    stop: async () => {
      await service.stopWorkers();
      await infrastructure.close();
    },
  };
};
