import { createRoute, z } from '@hono/zod-openapi';
import { WITHDRAWAL_STATUSES } from '../../domain/withdrawal/withdrawal.js';
import { pageQuery } from '../pagination.js';
import { tokenSummarySchema } from '../payments/routes.js';
import { authenticatedErrors, callerSecurity, errorBodySchema, errorResponses, timestampSchema, userIdSchema } from '../router.js';

const statusSchema = z.enum(WITHDRAWAL_STATUSES as [string, ...string[]]).openapi({ example: 'PendingApproval' });

/** SPEC §2.2. */
export const withdrawalSchema = z
  .object({
    id: z.string().openapi({ example: '0f4c6a0e-7d0b-4a8e-9f43-2b6f1c0d9a11' }),
    orgId: z.string(),
    chainId: z.string().openapi({ example: 'eip155:1' }),
    tokenId: z.string().openapi({ example: 'eip155:1/erc20:0xdac17f958d2ee523a2206206994597c13d831ec7' }),
    amount: z.string().openapi({ description: 'base units', example: '25000000' }),
    recipient: z.string().openapi({ example: '0x00000000000000000000000000000000000000b2' }),
    memo: z.string().nullable().openapi({ description: 'on XRP, the destination tag' }),
    reference: z.string().openapi({ description: 'the caller’s unique idempotency key', example: 'payout-2026-11-22-0001' }),
    internalNote: z.string(),
    status: statusSchema,
    txnHash: z.string().nullable(),
    txnError: z.string().nullable().openapi({ description: 'why it failed, or `Cancelled by <username>`' }),
    initiator: z.string().openapi({ description: 'user id of the creator' }),
    approvers: z.array(z.string()).openapi({ description: 'user ids that approved, the initiator first' }),
    fee: z.string().nullable().openapi({ description: 'the network fee paid, base units of the chain’s native coin; null until known' }),
    createdAt: timestampSchema,
    updatedAt: timestampSchema,
  })
  .openapi('Withdrawal');

/** SPEC §4.5's single read. */
export const withdrawalDetailSchema = withdrawalSchema
  .extend({ externalUserId: z.string().nullable().openapi({ description: 'the integrator’s user it was made for, if given' }), Token: tokenSummarySchema })
  .openapi('WithdrawalDetail');

export const createWithdrawalBody = z
  .object({
    chainId: z.string().openapi({ example: 'eip155:1' }),
    tokenId: z.string().openapi({ description: 'CAIP-19; must belong to the chain', example: 'eip155:1/slip44:60' }),
    amount: z.string().openapi({ description: 'base units, greater than 0', example: '5000000000000000' }),
    recipient: z.string().min(1).max(200).openapi({ description: 'an address of the chain (an X-address carries its own destination tag on XRP)' }),
    reference: z.string().min(1).max(255).openapi({ description: 'unique per organization; reusing it is DUPLICATE_REFERENCE' }),
    memo: z.string().max(255).optional().openapi({ description: 'on XRP the destination tag (decimal 0–4294967295), required by accounts that demand one' }),
    internalNote: z.string().max(1000).optional(),
    externalUserId: userIdSchema('the integrator’s user on whose behalf it withdraws (1–255 printable ASCII)').optional(),
  })
  .strict()
  .openapi('CreateWithdrawal');

const idParam = z.object({ id: z.string().min(1).max(100).openapi({ param: { name: 'id', in: 'path' }, example: '0f4c6a0e-7d0b-4a8e-9f43-2b6f1c0d9a11' }) });

const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { 'application/json': { schema } } });

export const createWithdrawalRoute = createRoute({
  method: 'post',
  path: '/withdrawals',
  tags: ['Withdrawals'],
  summary: 'Request a withdrawal: its funds are held at once',
  description:
    'Status `Pending` when the organization needs one signer, else `PendingApproval`. Refusals: 400 BAD_REQUEST, INVALID_USER_ID, INVALID_AMOUNT, INVALID_RECIPIENT_ADDRESS, MISSING_DESTINATION_TAG; 409 DUPLICATE_REFERENCE (details.withdrawalId); 422 INVALID_CHAIN, CHAIN_NOT_ENABLED, INVALID_TOKEN, INVALID_TOKEN_CHAIN, TOKEN_NOT_ENABLED, WITHDRAWAL_BELOW_MINIMUM, WITHDRAWAL_ABOVE_MAXIMUM, INSUFFICIENT_GAS, INSUFFICIENT_BALANCE, INSUFFICIENT_CONFIRMED_BALANCE.',
  security: callerSecurity,
  request: { body: { required: true, content: { 'application/json': { schema: createWithdrawalBody } } } },
  responses: {
    201: json(z.object({ withdrawal: withdrawalSchema }).openapi('WithdrawalCreated'), 'Created; txnHash and txnError are null'),
    ...errorResponses(...authenticatedErrors, 400, 409, 413, 422, 503),
  },
});

export const listWithdrawalsRoute = createRoute({
  method: 'get',
  path: '/withdrawals',
  tags: ['Withdrawals'],
  summary: 'The organization’s withdrawals, newest first',
  security: callerSecurity,
  request: { query: z.object({ status: statusSchema.optional().openapi({ description: 'only withdrawals in this status' }), ...pageQuery }) },
  responses: {
    200: json(z.object({ withdrawals: z.array(withdrawalSchema), nextCursor: z.string().nullable() }).openapi('WithdrawalPage'), 'A page; nextCursor is null on the last'),
    ...errorResponses(...authenticatedErrors, 400),
  },
});

export const getWithdrawalRoute = createRoute({
  method: 'get',
  path: '/withdrawals/{id}',
  tags: ['Withdrawals'],
  summary: 'One withdrawal (unwrapped), with externalUserId and Token',
  security: callerSecurity,
  request: { params: idParam },
  responses: { 200: json(withdrawalDetailSchema, 'The withdrawal as it is now'), ...errorResponses(...authenticatedErrors, 400, 404) },
});

export const cancelWithdrawalRoute = createRoute({
  method: 'delete',
  path: '/withdrawals/{id}',
  tags: ['Withdrawals'],
  summary: 'Cancel a Pending or PendingApproval withdrawal; its funds are released',
  description: '409 WITHDRAWAL_NOT_PENDING once it is Processing or over, or once its transaction is signed; 404 WITHDRAWAL_NOT_FOUND.',
  security: callerSecurity,
  request: { params: idParam },
  responses: {
    200: json(
      z.object({ withdrawal: z.object({ id: z.string(), status: statusSchema, txnError: z.string().nullable().openapi({ example: 'Cancelled by alice' }), updatedAt: timestampSchema }) }).openapi('WithdrawalCancelled'),
      'Cancelled',
    ),
    ...errorResponses(...authenticatedErrors, 400, 404, 409),
  },
});

export const approveWithdrawalRoute = createRoute({
  method: 'post',
  path: '/withdrawals/{id}/approve',
  tags: ['Withdrawals'],
  summary: 'Approve a withdrawal (a person, with a fresh TOTP code)',
  description:
    'CONTRACT §4. A Bearer access token only (an API key is 403 FORBIDDEN). 401 INVALID_TOTP for a wrong or reused code; 409 DUPLICATE_APPROVAL, WITHDRAWAL_ALREADY_PROCESSED (not PendingApproval); 404 WITHDRAWAL_NOT_FOUND. When approvers reach minWithdrawalSigners the status becomes Pending.',
  security: [{ bearerAuth: [] }],
  request: {
    params: idParam,
    body: { required: true, content: { 'application/json': { schema: z.object({ totpCode: z.string().openapi({ example: '123456' }) }).strict().openapi('ApproveWithdrawal') } } },
  },
  responses: {
    200: json(z.object({ withdrawal: withdrawalSchema }).openapi('WithdrawalApprovedAnswer'), 'Approved'),
    ...errorResponses(...authenticatedErrors, 400, 403, 404, 409),
  },
});

export const approveWithdrawalsRoute = createRoute({
  method: 'post',
  path: '/withdrawals/approve',
  tags: ['Withdrawals'],
  summary: 'Approve several withdrawals with one fresh TOTP code (a person)',
  description:
    'CONTRACT §4. A Bearer access token only (an API key is 403 FORBIDDEN). One code for the whole request, spent once (401 INVALID_TOTP when wrong or reused). Each id is decided as the single approval, in the order given; a refused id answers its own error and does not stop the others.',
  security: [{ bearerAuth: [] }],
  request: {
    body: {
      required: true,
      content: {
        'application/json': {
          schema: z
            .object({
              ids: z.array(z.string().min(1).max(100)).min(1).max(100).openapi({ example: ['0f4c6a0e-7d0b-4a8e-9f43-2b6f1c0d9a11'] }),
              totpCode: z.string().openapi({ example: '123456' }),
            })
            .strict()
            .openapi('ApproveWithdrawals'),
        },
      },
    },
  },
  responses: {
    200: json(
      z
        .object({
          results: z.array(z.union([z.object({ id: z.string(), withdrawal: withdrawalSchema }), z.object({ id: z.string(), error: errorBodySchema })])),
        })
        .openapi('WithdrawalsApprovedAnswer'),
      'One result per id, in the order given',
    ),
    ...errorResponses(...authenticatedErrors, 400, 403),
  },
});
