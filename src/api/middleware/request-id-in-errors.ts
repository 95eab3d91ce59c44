import type { ErrorBody } from '../errors.js';

/** what this needs of a request's context: its id (set by requestContext, which calls this) */
interface NamedRequest {
  res: Response;
  get(key: 'requestId'): string;
}

const isErrorBody = (body: unknown): body is ErrorBody =>
  typeof body === 'object' && body !== null && typeof (body as ErrorBody).error === 'string' && typeof (body as ErrorBody).statusCode === 'number';

const withRequestId = async (c: NamedRequest): Promise<void> => {
  const body: unknown = await c.res
    .clone()
    .json()
    .catch(() => null);
  if (!isErrorBody(body)) return;
  const headers = new Headers(c.res.headers);
  headers.delete('content-length');
  c.res = new Response(JSON.stringify({ ...body, details: { ...body.details, requestId: c.get('requestId') } }), { status: c.res.status, headers });
};

/**
 * Every error body carries the request's id in `details.requestId`, whichever part of the app
 * answered (a route, validation, authentication, the fallbacks), so an integrator's support ticket
 * leads to the log lines of that request. Only JSON error bodies are touched; successes pass as
 * they are, at once (undefined: nothing to wait for). Called by the request's outermost
 * middleware (requestContext) on the answer.
 */
export const putRequestIdInErrorBody = (c: NamedRequest): Promise<void> | undefined => {
  if (c.res.status < 400 || !c.res.headers.get('content-type')?.startsWith('application/json')) return undefined;
  return withRequestId(c);
};
