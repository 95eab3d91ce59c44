import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { describe, expect, it } from 'vitest';
import { createApp, createOperationsApp } from '../../src/api/app.js';
import type { DepositAccountServices } from '../../src/application/deposit-accounts.js';
import type { OrganizationServices } from '../../src/application/organizations.js';
import { createLogger } from '../../src/log.js';

const appWith = (health: () => Promise<Record<string, boolean>>) => {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger('info', {}, (line) => lines.push(JSON.parse(line) as Record<string, unknown>));
  // these routes never reach the services: an empty stand-in keeps the test about the shell
  const app = createApp({
    logger,
    health,
    services: {} as OrganizationServices,
    depositAccounts: {} as DepositAccountServices,
    chains: { isChainRunning: () => false },
    rateLimits: { perMinute: 100, loginPerMinute: 10 },
  });
  return { app, lines, logger };
};

describe('HTTP shell', () => {
  it('answers /healthz with 200 when every store answers', async () => {
    const { app } = appWith(async () => ({ eventStore: true, readModels: true }));
    const response = await app.request('/healthz');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('answers /healthz with 503 naming the store that does not answer', async () => {
    const { app } = appWith(async () => ({ eventStore: false, readModels: true }));
    const response = await app.request('/healthz');
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({
      error: 'SERVICE_UNAVAILABLE',
      message: 'The service is temporarily unavailable',
      statusCode: 503,
      details: { checks: { eventStore: false, readModels: true }, requestId: response.headers.get('x-request-id') },
    });
  });

  it('answers 503 when the health check itself fails', async () => {
    const { app } = appWith(async () => {
      throw new Error('boom');
    });
    expect((await app.request('/healthz')).status).toBe(503);
  });

  it('turns an unexpected error into 500 INTERNAL_ERROR with no stack or message leaked', async () => {
    const { app, lines } = appWith(async () => ({ ok: true }));
    app.get('/explode', () => {
      throw new Error('connection string postgres://user:hunter2@db');
    });
    const response = await app.request('/explode');
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ error: 'INTERNAL_ERROR', message: 'An unexpected error occurred', statusCode: 500, details: { requestId: response.headers.get('x-request-id') } });
    expect(text).not.toContain('hunter2');
    expect(lines.find((line) => line.msg === 'unhandled error')).toMatchObject({ level: 'error', requestId: response.headers.get('x-request-id') });
  });

  it('puts the request id on every log line written while the request is handled, by any logger', async () => {
    const { app, lines, logger } = appWith(async () => ({ ok: true }));
    // code below the API logs with the logger it was given, not the request's
    app.get('/deep', async (c) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      logger.warn('something below the API', { step: 1 });
      return c.json({ ok: true });
    });
    const response = await app.request('/deep', { headers: { 'x-request-id': 'ticket-42' } });
    expect(response.status).toBe(200);
    expect(lines.find((line) => line.msg === 'something below the API')).toMatchObject({ requestId: 'ticket-42', step: 1, level: 'warn' });
    logger.info('outside any request');
    expect(lines.at(-1)).not.toHaveProperty('requestId');
  });

  it("names each request in a workers process's log line without entering a log context for its handlers", async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger('info', {}, (line) => lines.push(JSON.parse(line) as Record<string, unknown>));
    const app = createOperationsApp({ logger, health: async () => ({ ok: true }) });
    app.get('/deep', (c) => {
      logger.warn('something below the operations app');
      return c.json({ ok: true });
    });
    const response = await app.request('/deep', { headers: { 'x-request-id': 'ticket-43' } });
    expect(response.status).toBe(200);
    expect(lines.find((line) => line.msg === 'something below the operations app')).not.toHaveProperty('requestId');
    expect(lines.find((line) => line.msg === 'request')).toMatchObject({ requestId: 'ticket-43', path: '/deep', status: 200 });
  });

  it('answers unknown routes with 404 NOT_FOUND and a generated request id', async () => {
    const { app, lines } = appWith(async () => ({ ok: true }));
    const response = await app.request('/nope', { method: 'POST', headers: { 'x-request-id': 'bad id with spaces' } });
    expect(response.status).toBe(404);
    const requestId = response.headers.get('x-request-id');
    expect(await response.json()).toEqual({ error: 'NOT_FOUND', message: 'No such route', statusCode: 404, details: { requestId } });
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(lines.filter((line) => line.msg === 'request')).toEqual([
      expect.objectContaining({ requestId, method: 'POST', path: '/nope', status: 404, level: 'info' }),
    ]);
  });

  it('echoes the request id on answers served by Node, a success, an error and a handler’s own Response alike', async () => {
    const { app } = appWith(async () => ({ eventStore: true, readModels: true }));
    app.get('/own-response', () => new Response('plain', { status: 200 }));
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
    try {
      await new Promise((resolve) => server.once('listening', resolve));
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      for (const [path, status] of [['/healthz', 200], ['/nope', 404], ['/own-response', 200]] as const) {
        const response = await fetch(`${base}${path}`, { headers: { 'x-request-id': `ticket-${status}` } });
        expect(response.status).toBe(status);
        expect(response.headers.get('x-request-id')).toBe(`ticket-${status}`);
        await response.arrayBuffer();
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
