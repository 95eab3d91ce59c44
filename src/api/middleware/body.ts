import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { ApiError } from '../errors.js';
import type { AppEnv } from '../request-context.js';

export const MAX_BODY_BYTES = 64 * 1024;

/**
 * The devnet's batch of up to 1,000 deposits (CONTRACT §8) is some 150 KiB of JSON: that one route,
 * which exists only outside production, takes bodies up to 1 MiB.
 */
export const MAX_DEVNET_BATCH_BODY_BYTES = 1024 * 1024;
const LARGER_BODIES: Record<string, number> = { '/devnet/deposits': MAX_DEVNET_BATCH_BODY_BYTES };

const limitTo = (maxSize: number) =>
  bodyLimit({
    maxSize,
    onError: () => {
      throw new ApiError('PAYLOAD_TOO_LARGE', 413, `Request bodies are limited to ${maxSize} bytes here`);
    },
  });

/** Bodies over 64 KiB (or a route's own larger bound) are refused with 413 PAYLOAD_TOO_LARGE before anything reads them. */
export const limitBody = (): MiddlewareHandler<AppEnv> => {
  const standard = limitTo(MAX_BODY_BYTES);
  const larger = new Map(Object.entries(LARGER_BODIES).map(([path, maxSize]) => [path, limitTo(maxSize)]));
  return (c, next) => (larger.get(c.req.path) ?? standard)(c, next);
};
