import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { paths } from './schema.js';

export type { components, operations, paths } from './schema.js';

export interface LedgergateClientOptions {
  /** where the service answers, e.g. `http://127.0.0.1:8080` */
  baseUrl: string;
  /** an integrator's credential: sent as `x-api-key` */
  apiKey?: string;
  /** a person's session (from POST /auth/login), read at each request so it can change */
  accessToken?: () => string | null | undefined;
  /** another fetch (a test's in-process app, a proxy); the global fetch otherwise */
  fetch?: (request: Request) => Promise<Response>;
}

export type LedgergateClient = Client<paths>;

/**
 * A typed client of the ledgergate HTTP API: every path, parameter, body and answer is typed from
 * the service's own OpenAPI document (src/client/schema.ts is generated from it).
 *
 *   const api = createLedgergateClient({ baseUrl, apiKey });
 *   const { data, error } = await api.GET('/withdrawals/{id}', { params: { path: { id } } });
 */
export const createLedgergateClient = (options: LedgergateClientOptions): LedgergateClient => {
  const client = createClient<paths>({ baseUrl: options.baseUrl, ...(options.fetch ? { fetch: options.fetch } : {}) });
  const credentials: Middleware = {
    onRequest: ({ request }) => {
      if (options.apiKey) request.headers.set('x-api-key', options.apiKey);
      const token = options.accessToken?.();
      if (token) request.headers.set('authorization', `Bearer ${token}`);
      return request;
    },
  };
  client.use(credentials);
  return client;
};
