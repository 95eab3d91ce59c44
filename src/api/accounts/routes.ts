import { createRoute, z } from '@hono/zod-openapi';
import { pageQuery } from '../pagination.js';
import { authenticatedErrors, callerSecurity, errorResponses, timestampSchema, userIdSchema } from '../router.js';


export const accountSchema = z
  .object({
    orgId: z.string(),
    chainId: z.string().openapi({ example: 'eip155:1' }),
    externalUserId: z.string(),
    orgDepositAccountId: z.string(),
    properties: z
      .object({ address: z.string(), destinationTag: z.string().optional().openapi({ description: 'XRP only: the tag a depositor must send' }) })
      .openapi({ description: 'EVM, Bitcoin, Tron: address; XRP: the organization address and this user’s destination tag' }),
    createdAt: timestampSchema,
    updatedAt: timestampSchema,
  })
  .openapi('Account');

export const depositAddressRoute = createRoute({
  method: 'get',
  path: '/payments/deposit-address',
  tags: ['Deposits'],
  summary: 'The user’s deposit account on a chain, created on first request (one per user per chain, one address for every token of the chain)',
  security: callerSecurity,
  request: {
    query: z.object({
      chainId: z.string().min(1).max(100).openapi({ example: 'eip155:1' }),
      tokenId: z.string().min(1).max(300).openapi({ example: 'eip155:1/slip44:60' }),
      userId: userIdSchema('the integrator’s user id: 1–255 printable ASCII characters'),
    }),
  },
  responses: {
    200: { description: 'The account', content: { 'application/json': { schema: z.object({ address: accountSchema }) } } },
    ...errorResponses(...authenticatedErrors, 400, 422, 503),
  },
});

export const listAccountsRoute = createRoute({
  method: 'get',
  path: '/accounts',
  tags: ['Deposits'],
  summary: 'Every deposit account of the organization, all users and chains, newest first',
  security: callerSecurity,
  request: { query: z.object(pageQuery) },
  responses: {
    200: {
      description: 'A page of accounts; nextCursor is null on the last page',
      content: { 'application/json': { schema: z.object({ accounts: z.array(accountSchema), nextCursor: z.string().nullable() }).openapi('AccountPage') } },
    },
    ...errorResponses(...authenticatedErrors, 400),
  },
});
