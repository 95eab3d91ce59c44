import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { withLogContext, type Logger } from '../log.js';
import { recordRequestMetrics } from './middleware/metrics.js';
import { putRequestIdInErrorBody } from './middleware/request-id-in-errors.js';
import { nodeResponseOf } from './node-exchange.js';

/** Who is calling: set by the authentication middleware on every authenticated route. */
export interface Principal {
  orgId: string;
  userId: string;
  /** an API key acts as the user who owns it; some actions need a person (a JWT) */
  via: 'apiKey' | 'jwt';
  /** the person's login name (the key owner's, for an API key) */
  username: string;
}

export interface AppVariables {
  requestId: string;
  principal: Principal;
}

export type AppEnv = { Variables: AppVariables };

/** What a command appended from an HTTP request records about who asked and how. */
export const commandMetadataOf = (c: { get(key: 'principal'): Principal; get(key: 'requestId'): string }) => {
  const principal = c.get('principal');
  return {
    actor: principal.userId,
    orgId: principal.orgId,
    requestId: c.get('requestId'),
    credential: principal.via === 'jwt' ? ('person' as const) : ('api-key' as const),
    username: principal.username,
  };
};

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * Gives every request an id (the caller's `x-request-id` when it is sane, else a new UUID), echoes
 * it, puts it on every log line written while the request is handled (by any logger, through the
 * log context: no logger is made per request), and writes one JSON log line per request. Only method, path, status and timing are logged:
 * never headers, query strings or bodies, which may carry credentials.
 *
 * The request's outermost frame: it also names the request in an error body
 * (putRequestIdInErrorBody) and counts and times the answer (recordRequestMetrics), in this one
 * middleware rather than three, as each middleware frame is two more promises a request (its own
 * and Hono's dispatch), which on Node 20 each pay the log context's promise hook.
 *
 * `logContext: false` leaves out the log context (the request's own line still names it): a
 * `workers` process's /healthz, /readyz and /metrics log nothing else, and on Node 20 the first
 * log context a process enters (an AsyncLocalStorage) makes every promise it creates from then on
 * run a hook and take one more property, which the workers' promise-heavy batches pay for.
 */
export const requestContext =
  (logger: Logger, { logContext = true }: { logContext?: boolean } = {}): MiddlewareHandler<AppEnv> =>
  async (c, next) => {
    const offered = c.req.header('x-request-id');
    const requestId = offered && CLIENT_REQUEST_ID.test(offered) ? offered : randomUUID();
    c.set('requestId', requestId);
    // served by Node, the id goes on Node's response before any answer is built: setting it on
    // an answer already built would make Hono build that answer again as a web Response
    const nodeResponse = nodeResponseOf(c);
    nodeResponse?.setHeader('x-request-id', requestId);
    const started = performance.now();
    try {
      await (logContext ? withLogContext({ requestId }, next) : next());
      const naming = putRequestIdInErrorBody(c);
      if (naming) await naming;
    } finally {
      const durationMs = performance.now() - started;
      recordRequestMetrics(c, durationMs / 1000);
      if (!nodeResponse) c.header('x-request-id', requestId);
      // written after the log context ends, so it names the request itself
      logger.info('request', {
        requestId,
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        durationMs: Math.round(durationMs * 10) / 10,
      });
    }
  };
