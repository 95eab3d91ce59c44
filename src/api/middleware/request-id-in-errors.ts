import type { MiddlewareHandler } from 'hono';
import type { ErrorBody } from '../errors.js';
import type { AppEnv } from '../request-context.js';

const isErrorBody = (body: unknown): body is ErrorBody =>
  typeof body === 'object' && body !== null && typeof (body as ErrorBody).error === 'string' && typeof (body as ErrorBody).statusCode === 'number';

/**
 * Every error body carries the request's id in `details.requestId`, whichever part of the app
 * answered (a route, validation, authentication, the fallbacks), so an integrator's support ticket
 * leads to the log lines of that request. Only JSON error bodies are touched; successes pass as they are.
 */
export const requestIdInErrors = (): MiddlewareHandler<AppEnv> => async (c, next) => {
  await next();
  if (c.res.status < 400 || !c.res.headers.get('content-type')?.startsWith('application/json')) return;
  const body: unknown = await c.res
    .clone()
    .json()
    .catch(() => null);
  if (!isErrorBody(body)) return;
  const headers = new Headers(c.res.headers);
  headers.delete('content-length');
  c.res = new Response(JSON.stringify({ ...body, details: { ...body.details, requestId: c.get('requestId') } }), { status: c.res.status, headers });
};
