import type { IncomingMessage } from 'node:http';
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import getRawBody from 'raw-body';
import { ApiError } from '../errors.js';
import { nodeRequestOf } from '../node-exchange.js';
import type { AppEnv } from '../request-context.js';

export const MAX_BODY_BYTES = 64 * 1024;

/**
 * The devnet's batch of up to 1,000 deposits (CONTRACT §8) is some 150 KiB of JSON: that one route,
 * which exists only outside production, takes bodies up to 1 MiB.
 */
export const MAX_DEVNET_BATCH_BODY_BYTES = 1024 * 1024;
const LARGER_BODIES: Record<string, number> = { '/devnet/deposits': MAX_DEVNET_BATCH_BODY_BYTES };

const tooLarge = (maxSize: number) => new ApiError('PAYLOAD_TOO_LARGE', 413, `Request bodies are limited to ${maxSize} bytes here`);

/** as a web Request's text(): UTF-8, a byte-order mark dropped, malformed sequences replaced */
const utf8 = new TextDecoder();

/**
 * The body read straight from Node's request stream (raw-body: refused past `maxSize`, checked
 * against Content-Length before a byte is read, and against the bytes as they come) and handed to
 * Hono as the request's text, which the route's JSON validation parses. Hono's node adapter would
 * otherwise build a web Request and a web stream around the socket for every request with a body
 * (about 0.2 ms of CPU a request).
 */
const readNodeBody = async (c: Context<AppEnv>, incoming: IncomingMessage, maxSize: number) => {
  const length = incoming.headers['content-length'];
  const bytes = await getRawBody(incoming, { limit: maxSize, length: incoming.headers['transfer-encoding'] ? undefined : length }).catch((error: { type?: string }) => {
    if (error.type === 'entity.too.large') throw tooLarge(maxSize);
    if (error.type === 'request.aborted' || error.type === 'request.size.invalid') throw new ApiError('BAD_REQUEST', 400, 'The request body did not arrive whole');
    throw error;
  });
  // Hono keeps each body read as a promise (its type says the value): json() parses the cached text
  (c.req.bodyCache as { text?: Promise<string> }).text = Promise.resolve(utf8.decode(bytes));
};

/**
 * Bodies over 64 KiB (or a route's own larger bound) are refused with 413 PAYLOAD_TOO_LARGE before
 * any route sees them. Served by Node, the body is read here (readNodeBody); driven through
 * `app.request` (a web Request), Hono's bodyLimit checks it as the route reads it.
 */
export const limitBody = (): MiddlewareHandler<AppEnv> => {
  const webLimits = new Map<number, MiddlewareHandler<AppEnv>>();
  const webLimit = (maxSize: number) => {
    let limit = webLimits.get(maxSize);
    if (!limit) {
      limit = bodyLimit({
        maxSize,
        onError: () => {
          throw tooLarge(maxSize);
        },
      });
      webLimits.set(maxSize, limit);
    }
    return limit;
  };
  return async (c, next) => {
    const maxSize = LARGER_BODIES[c.req.path] ?? MAX_BODY_BYTES;
    const incoming = nodeRequestOf(c);
    if (!incoming) return webLimit(maxSize)(c, next);
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') await readNodeBody(c, incoming, maxSize);
    await next();
  };
};
