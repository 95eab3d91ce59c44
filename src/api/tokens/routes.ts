import { createRoute, z } from '@hono/zod-openapi';
import { enabledOnlyQuery } from '../chains/routes.js';
import { authenticatedErrors, callerSecurity, errorResponses } from '../router.js';

export const tokenSchema = z
  .object({
    id: z.string().openapi({ description: 'CAIP-19', example: 'eip155:1/erc20:0xdac17f958d2ee523a2206206994597c13d831ec7' }),
    chainId: z.string().openapi({ description: 'CAIP-2', example: 'eip155:1' }),
    name: z.string().openapi({ example: 'Tether USD' }),
    symbol: z.string().openapi({ example: 'USDT' }),
    decimals: z.number().int().openapi({ example: 6 }),
    address: z.string().openapi({ description: 'the ERC-20 / TRC-20 contract; empty for a native asset', example: '0xdAC17F958D2ee523a2206206994597C13D831ec7' }),
    enabled: z.boolean().openapi({ description: 'its chain enabled and the token not switched off by the organization' }),
    minimumAmount: z.string().openapi({ description: 'smallest deposit credited, base units', example: '1000000' }),
    properties: z.object({
      minimumWithdrawal: z.string().openapi({ description: 'base units', example: '1000000' }),
      maximumWithdrawal: z.string().openapi({ description: 'base units', example: '1000000000000' }),
    }),
  })
  .openapi('Token');

export const listTokensRoute = createRoute({
  method: 'get',
  path: '/tokens',
  tags: ['Chains and tokens'],
  summary: 'The supported tokens (native assets and stablecoins), as the caller’s organization has them',
  security: callerSecurity,
  request: {
    query: z.object({
      chainId: z.string().max(100).optional().openapi({ description: 'only this chain’s tokens (CAIP-2)', example: 'eip155:1' }),
      enabledOnly: enabledOnlyQuery,
    }),
  },
  responses: {
    200: { description: 'The tokens', content: { 'application/json': { schema: z.object({ tokens: z.array(tokenSchema) }) } } },
    ...errorResponses(...authenticatedErrors, 400, 422),
  },
});
