import { createRoute, z } from '@hono/zod-openapi';
import { authenticatedErrors, callerSecurity, errorResponses, timestampSchema } from '../router.js';

export const organizationSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    webhookUrl: z.string().nullable(),
    webhookSigningSecret: z.string(),
    minWithdrawalSigners: z.number().int(),
    createdAt: timestampSchema,
    updatedAt: timestampSchema,
  })
  .openapi('Organization');

const empty = z.object({}).strict().openapi('Empty');
const ok = (description: string, schema: z.ZodType) => ({ 200: { description, content: { 'application/json': { schema } } } });

export const getOrganizationRoute = createRoute({
  method: 'get',
  path: '/organisation',
  tags: ['Organization'],
  summary: 'The caller’s organization',
  security: callerSecurity,
  responses: { ...ok('The organization', organizationSchema), ...errorResponses(...authenticatedErrors) },
});

export const rotateApiKeyRoute = createRoute({
  method: 'patch',
  path: '/organisation/api-key',
  tags: ['Organization'],
  summary: 'Issue a new API key, owned by the caller; the previous key is refused from this answer on (Bearer token only)',
  security: [{ bearerAuth: [] }],
  responses: { ...ok('The new key, shown once', z.object({ apiKey: z.string() }).openapi('ApiKey')), ...errorResponses(...authenticatedErrors, 403) },
});

export const setWebhookRoute = createRoute({
  method: 'patch',
  path: '/organisation/webhook',
  tags: ['Organization'],
  summary: 'Set the webhook URL (HTTPS; plain HTTP to localhost outside production)',
  security: callerSecurity,
  request: {
    body: {
      required: true,
      content: { 'application/json': { schema: z.object({ webhookUrl: z.string().openapi({ example: 'https://hooks.example.com/ledgergate' }) }).strict() } },
    },
  },
  responses: { ...ok('Set', empty), ...errorResponses(...authenticatedErrors, 400, 413) },
});

export const rotateSigningSecretRoute = createRoute({
  method: 'patch',
  path: '/organisation/webhook/signing-secret',
  tags: ['Organization'],
  summary: 'Rotate the webhook signing secret; deliveries from now on are signed with the new one',
  security: callerSecurity,
  responses: {
    ...ok('The new secret', z.object({ webhookSigningSecret: z.string() }).openapi('WebhookSigningSecret')),
    ...errorResponses(...authenticatedErrors),
  },
});

export const setMinSignersRoute = createRoute({
  method: 'patch',
  path: '/organisation/min-withdrawal-signers',
  tags: ['Organization'],
  summary: 'How many signers must approve a withdrawal (1 to the number of users; 1 approves automatically)',
  security: callerSecurity,
  request: {
    body: { required: true, content: { 'application/json': { schema: z.object({ minWithdrawalSigners: z.number().openapi({ type: 'integer', minimum: 1, example: 2, description: 'an integer from 1 to the number of users (else INVALID_MIN_SIGNERS)' }) }).strict() } } },
  },
  responses: { ...ok('Set', empty), ...errorResponses(...authenticatedErrors, 400, 413, 422) },
});
