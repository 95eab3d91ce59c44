import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { ApiError } from '../errors.js';
import type { AppEnv } from '../request-context.js';

export const MAX_BODY_BYTES = 64 * 1024;

/** Bodies over 64 KiB are refused with 413 PAYLOAD_TOO_LARGE before anything reads them. */
export const limitBody = (): MiddlewareHandler<AppEnv> =>
  bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: () => {
      throw new ApiError('PAYLOAD_TOO_LARGE', 413, `Request bodies are limited to ${MAX_BODY_BYTES} bytes`);
    },
  });
