import { createRoute, z } from '@hono/zod-openapi';
import { authenticatedErrors, callerSecurity, errorResponses } from '../router.js';

/** SPEC §4.3: a boolean query parameter, default true; only the words "true" and "false" are accepted. */
export const enabledOnlyQuery = z
  .enum(['true', 'false'])
  .default('true')
  .openapi({ description: 'only what is enabled for the organization (default true)', example: 'false' });

export const chainSchema = z
  .object({
    id: z.string().openapi({ description: 'CAIP-2', example: 'eip155:1' }),
    name: z.string().openapi({ example: 'Ethereum' }),
    namespace: z.string().openapi({ example: 'eip155' }),
    reference: z.string().openapi({ example: '1' }),
    enabled: z.boolean().openapi({ description: 'running on this service and not switched off by the organization' }),
    isTestnet: z.boolean(),
    properties: z.object({
      nativeCurrency: z.string().openapi({ example: 'ETH' }),
      decimals: z.number().int().openapi({ example: 18 }),
      confirmations: z.number().int().openapi({ description: 'blocks needed for deposit.confirmed', example: 12 }),
    }),
  })
  .openapi('Chain');

export const listChainsRoute = createRoute({
  method: 'get',
  path: '/chains',
  tags: ['Chains and tokens'],
  summary: 'The supported chains, as the caller’s organization has them',
  security: callerSecurity,
  request: { query: z.object({ enabledOnly: enabledOnlyQuery }) },
  responses: {
    200: { description: 'The chains, in SPEC’s order', content: { 'application/json': { schema: z.object({ chains: z.array(chainSchema) }) } } },
    ...errorResponses(...authenticatedErrors, 400),
  },
});

export const getChainRoute = createRoute({
  method: 'get',
  path: '/chains/{id}',
  tags: ['Chains and tokens'],
  summary: 'One chain by its CAIP-2 id (the colon may be sent as is or as %3A)',
  security: callerSecurity,
  request: { params: z.object({ id: z.string().openapi({ param: { name: 'id', in: 'path' }, example: 'eip155:1' }) }) },
  responses: {
    200: { description: 'The chain', content: { 'application/json': { schema: z.object({ chain: chainSchema }) } } },
    ...errorResponses(...authenticatedErrors, 422),
  },
});
