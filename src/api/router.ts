import { OpenAPIHono, z } from '@hono/zod-openapi';
import { ApiError } from './errors.js';
import { unstorableStrings } from './storable-strings.js';
import type { AppEnv } from './request-context.js';

/**
 * Every router is made here, so every route answers a failed validation the same way:
 * 400 BAD_REQUEST with the zod issues in `details.issues`.
 */
type Issue = { path: PropertyKey[]; message: string; code: string; keys?: string[]; errors?: Issue[][] };

/** how many of the body's keys a union's shape does not know, at the shape's own level */
const unknownKeys = (branch: Issue[]) => branch.filter((inner) => inner.code === 'unrecognized_keys' && inner.path.length === 0).reduce((sum, inner) => sum + (inner.keys?.length ?? 1), 0);

/**
 * A body that matches none of a union's shapes: the issues of the shape that knows the most of its
 * keys, so `{ transfers: [...] }` with a bad transfer names that transfer, and a single transfer
 * with an unknown field names the field; the union's own issue when two shapes fit it equally.
 */
const closestIssues = (issue: Issue): Issue[] => {
  if (issue.code !== 'invalid_union' || !issue.errors || issue.errors.length === 0) return [issue];
  const scores = issue.errors.map(unknownKeys);
  const best = Math.min(...scores);
  if (scores.filter((score) => score === best).length !== 1) return [issue];
  return issue.errors[scores.indexOf(best)]!.flatMap((inner) => closestIssues({ ...inner, path: [...issue.path, ...inner.path] }));
};

export const createRouter = () =>
  new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        const issues = (result.error.issues as Issue[]).flatMap(closestIssues).map((issue) => ({ path: issue.path.join('.'), message: issue.message, code: issue.code }));
        throw new ApiError('BAD_REQUEST', 400, 'The request is malformed or misses required fields', { issues });
      }
      const unstorable = unstorableStrings(result.data);
      if (unstorable.length > 0) {
        const issues = unstorable.map((issue) => ({ ...issue, code: 'invalid_string' }));
        throw new ApiError('BAD_REQUEST', 400, `The request has a string that cannot be stored: ${issues.map((issue) => issue.path).join(', ')}`, { issues });
      }
    },
  });

/** SPEC §7.1's error body, for the OpenAPI document. */
export const errorBodySchema = z
  .object({
    error: z.string().openapi({ example: 'BAD_REQUEST' }),
    message: z.string(),
    statusCode: z.number().int(),
    details: z.record(z.string(), z.unknown()).optional(),
  })
  .openapi('Error');

const described: Record<number, string> = {
  400: 'BAD_REQUEST (malformed JSON, wrong types, missing or unknown fields; details.issues), or the route’s own 400 codes',
  401: 'UNAUTHORIZED, INVALID_API_KEY or INVALID_TOKEN',
  403: 'FORBIDDEN: this action needs a person (a JWT), not an API key',
  404: 'not found',
  409: 'conflict',
  413: 'PAYLOAD_TOO_LARGE: bodies over 64 KiB',
  422: 'semantically invalid',
  429: 'RATE_LIMITED, with Retry-After in seconds',
  500: 'INTERNAL_ERROR',
  503: 'SERVICE_UNAVAILABLE',
};

/** The error responses of a route, each with SPEC's body. */
export const errorResponses = (...statuses: number[]) =>
  Object.fromEntries(
    statuses.map((status) => [status, { description: described[status] ?? 'error', content: { 'application/json': { schema: errorBodySchema } } }]),
  );

/** Routes open to an API key or a person's access token. */
export const callerSecurity: Record<string, string[]>[] = [{ apiKeyAuth: [] }, { bearerAuth: [] }];

/** SPEC §2.1: ISO 8601 UTC with milliseconds. */
export const timestampSchema = z.string().openapi({ example: '2026-11-22T10:00:00.000Z' });

/**
 * CONTRACT §6's user id (1–255 printable ASCII), as the document states it. The handler checks it
 * (checkExternalUserId), so a bad one is INVALID_USER_ID as CONTRACT §5 says, not the validation
 * hook's BAD_REQUEST: the limits here describe, they do not enforce.
 */
export const userIdSchema = (description: string) =>
  z.string().openapi({ description, minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]{1,255}$', example: 'user-1' });

/** Errors every authenticated route can answer. */
export const authenticatedErrors = [401, 429, 500] as const;
