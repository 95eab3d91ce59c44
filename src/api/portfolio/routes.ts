import { createRoute, z } from '@hono/zod-openapi';
import { tokenSummarySchema } from '../payments/routes.js';
import { authenticatedErrors, callerSecurity, errorResponses } from '../router.js';

export const balanceSchema = z
  .object({
    chainId: z.string().openapi({ example: 'eip155:1' }),
    tokenId: z.string().openapi({ example: 'eip155:1/slip44:60' }),
    available: z.string().openapi({ description: 'confirmed deposits − held and sent withdrawals − fees, base units', example: '1500000000000000000' }),
    pending: z.string().openapi({ description: 'detected deposits not yet confirmed, base units', example: '0' }),
    Token: tokenSummarySchema,
  })
  .openapi('Balance');

export const portfolioRoute = createRoute({
  method: 'get',
  path: '/portfolio',
  tags: ['Deposits'],
  summary: 'The organization’s balance of every token it has received (CONTRACT §9)',
  security: callerSecurity,
  responses: {
    200: { description: 'The balances, in the token catalog’s order', content: { 'application/json': { schema: z.object({ balances: z.array(balanceSchema) }).openapi('Portfolio') } } },
    ...errorResponses(...authenticatedErrors),
  },
});
