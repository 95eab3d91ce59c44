import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/api-harness.js';

describe('OpenAPI document and docs page', () => {
  let service: TestService;
  let document: Record<string, unknown>;

  beforeAll(async () => {
    service = await startTestService();
    const response = await service.request('GET', '/openapi.json');
    expect(response.status).toBe(200);
    document = response.body!;
  });
  afterAll(async () => service.stop());

  it('validates as OpenAPI 3.1', async () => {
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('describes every endpoint, its request and its error responses', () => {
    const paths = document.paths as Record<string, Record<string, { responses: Record<string, unknown>; requestBody?: unknown; security?: unknown }>>;
    const operations = Object.entries(paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`));
    expect(operations.sort()).toEqual(
      expect.arrayContaining([
        'GET /healthz',
        'GET /readyz',
        'GET /metrics',
        'POST /auth/login',
        'GET /auth/profile',
        'GET /organisation',
        'PATCH /organisation/api-key',
        'PATCH /organisation/webhook',
        'PATCH /organisation/webhook/signing-secret',
        'PATCH /organisation/min-withdrawal-signers',
      ]),
    );
    for (const [path, methods] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        if (['/healthz', '/readyz', '/metrics', '/audit/public-key'].includes(path)) continue; // no credentials and no input: nothing to refuse
        const statuses = Object.keys(operation.responses);
        expect(statuses, `${method} ${path}`).toContain('500');
        expect(statuses.some((status) => status.startsWith('4')), `${method} ${path}`).toBe(true);
        if (path !== '/auth/login') expect(operation.security, `${method} ${path}`).toBeDefined();
      }
    }
    expect(paths['/auth/login']?.post?.requestBody).toBeDefined();
    expect((document.components as { securitySchemes: Record<string, unknown> }).securitySchemes).toEqual({
      apiKeyAuth: { type: 'apiKey', in: 'header', name: 'x-api-key' },
      bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
    });
  });

  it('gives client generators what they need: servers, an operationId on every operation (unique), security [] where no credentials are asked', () => {
    expect(document.servers).toEqual([{ url: '/', description: 'this service' }]);
    const paths = document.paths as Record<string, Record<string, { operationId?: string; security?: unknown[] }>>;
    const ids = Object.values(paths).flatMap((methods) => Object.values(methods).map((operation) => operation.operationId));
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(paths['/withdrawals/{id}/approve']?.post?.operationId).toBe('postWithdrawalsIdApprove');
    for (const [path, method] of [['/healthz', 'get'], ['/auth/login', 'post'], ['/audit/public-key', 'get']] as const) expect(paths[path]?.[method]?.security).toEqual([]);
    const minSigners = (paths['/organisation/min-withdrawal-signers']?.patch as unknown as { requestBody: { content: { 'application/json': { schema: { properties: { minWithdrawalSigners: object } } } } } })
      .requestBody.content['application/json'].schema.properties.minWithdrawalSigners;
    expect(minSigners).toMatchObject({ type: 'integer', minimum: 1 });
  });

  it('states the limits the server enforces: 400 wherever an id can be too long, and the user id’s length and characters', () => {
    type Parameter = { name: string; in: string; schema: Record<string, unknown> };
    const paths = document.paths as Record<string, Record<string, { responses: Record<string, unknown>; parameters?: Parameter[] }>>;
    const withIdParameter = Object.entries(paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([, operation]) => (operation.parameters ?? []).some((parameter) => parameter.in === 'path' && parameter.name === 'id' && parameter.schema.maxLength !== undefined))
        .map(([method, operation]) => [`${method} ${path}`, Object.keys(operation.responses).includes('400')]),
    );
    expect(withIdParameter.length).toBeGreaterThanOrEqual(5);
    expect(withIdParameter.filter(([, documented]) => !documented)).toEqual([]);
    const userIds = Object.values(paths).flatMap((methods) => Object.values(methods).flatMap((operation) => (operation.parameters ?? []).filter((parameter) => parameter.name === 'userId')));
    expect(userIds.length).toBe(3);
    for (const parameter of userIds) expect(parameter.schema).toMatchObject({ minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]{1,255}$' });
  });

  it('renders /docs from local assets, without credentials', async () => {
    const page = await service.app.request('/docs');
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('/docs/assets/swagger-ui-bundle.js');
    expect(html).not.toMatch(/https?:\/\//);
    const bundle = await service.app.request('/docs/assets/swagger-ui-bundle.js');
    expect(bundle.status).toBe(200);
    expect((await bundle.text()).length).toBeGreaterThan(100_000);
    expect((await service.app.request('/docs/assets/..%2Fpackage.json')).status).toBe(404);
  });
});
