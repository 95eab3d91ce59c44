import type { MiddlewareHandler } from 'hono';
import { ApiError } from '../errors.js';
import type { RateLimiter } from '../rate-limiter.js';
import type { AppEnv } from '../request-context.js';

export const rateLimited = (retryAfterSeconds: number) =>
  new ApiError('RATE_LIMITED', 429, `Too many requests; retry in ${retryAfterSeconds} s`, { retryAfterSeconds }, {
    'Retry-After': String(retryAfterSeconds),
  });

/**
 * Per API key (its owner) or per person: RATE_LIMIT_PER_MINUTE (CONTRACT §1). After authentication.
 * Not an async function: it hands on the next middleware's promise instead of making one of its own.
 */
export const limitRate =
  (limiter: RateLimiter): MiddlewareHandler<AppEnv> =>
  (c, next) => {
    const { via, userId, orgId } = c.get('principal');
    const verdict = limiter.take(`${via}:${orgId}:${userId}`);
    if (!verdict.allowed) throw rateLimited(verdict.retryAfterSeconds);
    return next();
  };
