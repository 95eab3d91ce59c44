import { createRoute, z } from '@hono/zod-openapi';
import { pageQuery } from '../pagination.js';
import { authenticatedErrors, callerSecurity, errorResponses, timestampSchema, userIdSchema } from '../router.js';

/** SPEC §2.7. */
export const tokenSummarySchema = z
  .object({
    id: z.string().openapi({ example: 'eip155:1/erc20:0xdac17f958d2ee523a2206206994597c13d831ec7' }),
    name: z.string().openapi({ example: 'Tether USD' }),
    symbol: z.string().openapi({ example: 'USDT' }),
    decimals: z.number().int().openapi({ example: 6 }),
    address: z.string().openapi({ description: 'the contract; empty for a native asset' }),
  })
  .openapi('TokenSummary');

/** SPEC §2.3, with CONTRACT §6's reconciliation fields. */
export const depositSchema = z
  .object({
    chainId: z.string().openapi({ example: 'eip155:1' }),
    txnHash: z.string(),
    outputIndex: z.number().int().openapi({ description: 'the output, log or event index within the transaction: with txnHash it names the deposit' }),
    toAddress: z.string().openapi({ description: 'the deposit address it was sent to' }),
    status: z.enum(['detected', 'confirmed', 'reverted']).openapi({ description: 'detected (pending), confirmed (credited), reverted (its block left the chain before confirmation: never credited, listed so it can be matched)' }),
    confirmations: z.number().int().openapi({ description: 'blocks on top of its own, as last recorded (its final count once confirmed)' }),
    tokenId: z.string().openapi({ example: 'eip155:1/slip44:60' }),
    amount: z.string().openapi({ description: 'base units', example: '1500000000000000000' }),
    accountChainId: z.string().openapi({ description: 'chain of the deposit account' }),
    externalUserId: z.string(),
    senderAddress: z.string(),
    Token: tokenSummarySchema,
    createdAt: timestampSchema.openapi({ description: 'when the deposit was detected' }),
    updatedAt: timestampSchema,
  })
  .openapi('Deposit');

const userIdDescription = 'the integrator’s user id: 1–255 printable ASCII characters';

export const listPaymentsRoute = createRoute({
  method: 'get',
  path: '/payments',
  tags: ['Deposits'],
  summary: 'The organization’s deposits (detected, confirmed or reverted: see status), newest first',
  security: callerSecurity,
  request: { query: z.object({ userId: userIdSchema(`only this user’s deposits; ${userIdDescription}`).optional(), ...pageQuery }) },
  responses: {
    200: {
      description: 'A page of deposits; nextCursor is null on the last page',
      content: { 'application/json': { schema: z.object({ payments: z.array(depositSchema), nextCursor: z.string().nullable() }).openapi('PaymentPage') } },
    },
    ...errorResponses(...authenticatedErrors, 400),
  },
});

export const listUserDepositsRoute = createRoute({
  method: 'get',
  path: '/payments/{userId}/deposits',
  tags: ['Deposits'],
  summary: 'One user’s deposits across all chains, newest first',
  security: callerSecurity,
  request: { params: z.object({ userId: userIdSchema(userIdDescription).openapi({ param: { name: 'userId', in: 'path' } }) }), query: z.object(pageQuery) },
  responses: {
    200: {
      description: 'A page of the user’s deposits; nextCursor is null on the last page',
      content: { 'application/json': { schema: z.object({ deposits: z.array(depositSchema), nextCursor: z.string().nullable() }).openapi('DepositPage') } },
    },
    ...errorResponses(...authenticatedErrors, 400),
  },
});
