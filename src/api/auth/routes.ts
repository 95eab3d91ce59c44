import { createRoute, z } from '@hono/zod-openapi';
import { authenticatedErrors, errorResponses } from '../router.js';

export const loginBody = z
  .object({
    username: z.string().min(1).max(256),
    password: z.string().min(1).max(1024),
    totpCode: z.string().min(1).max(16).openapi({ example: '123456' }),
  })
  .strict()
  .openapi('LoginRequest');

export const loginRoute = createRoute({
  method: 'post',
  path: '/auth/login',
  tags: ['Authentication'],
  summary: 'Log in with username, password and a TOTP code; answers a one-hour access token',
  request: { body: { required: true, content: { 'application/json': { schema: loginBody } } } },
  responses: {
    200: { description: 'Logged in', content: { 'application/json': { schema: z.object({ accessToken: z.string() }).openapi('LoginResponse') } } },
    ...errorResponses(400, 401, 413, 429, 500),
  },
});

export const profileSchema = z
  .object({ id: z.string(), username: z.string(), org: z.object({ id: z.string(), name: z.string() }) })
  .openapi('UserProfile');

export const profileRoute = createRoute({
  method: 'get',
  path: '/auth/profile',
  tags: ['Authentication'],
  summary: 'The logged-in person (Bearer token only; an API key gets 403)',
  security: [{ bearerAuth: [] }],
  responses: {
    200: { description: 'The profile', content: { 'application/json': { schema: profileSchema } } },
    ...errorResponses(...authenticatedErrors, 403),
  },
});
