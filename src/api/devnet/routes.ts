import { createRoute, z } from '@hono/zod-openapi';
import { authenticatedErrors, callerSecurity, errorResponses } from '../router.js';

/** CONTRACT §8: the devnet's controls. They exist only outside production. */
const tags = ['Devnet'];
const chainId = z.string().min(1).openapi({ example: 'eip155:11155111', description: 'CAIP-2 id of a supported chain' });
const jsonBody = <T extends z.ZodType>(schema: T) => ({ required: true, content: { 'application/json': { schema } } });
const json = <T extends z.ZodType>(description: string, schema: T) => ({ description, content: { 'application/json': { schema } } });
const blockNumberSchema = z.object({ blockNumber: z.number().int() }).openapi('DevnetBlockNumber');
const emptySchema = z.object({}).strict();

/** The most transfers one batch deposits (CONTRACT §8). */
export const MAX_DEPOSITS_PER_BATCH = 1000;

const depositRequestSchema = z
  .object({
    chainId,
    tokenId: z.string().min(1).openapi({ example: 'eip155:11155111/slip44:60' }),
    toAddress: z.string().min(1),
    amount: z.string().openapi({ example: '1000000000000000000', description: 'base units, a decimal integer string (CONTRACT §6)' }),
    destinationTag: z
      .union([z.string(), z.number()])
      .optional()
      .openapi({ description: 'XRP only: a decimal integer 0–4294967295', example: '12345' }),
    fromAddress: z
      .string()
      .min(1)
      .optional()
      .openapi({ description: 'the sender: recorded as an external transfer from that address (the devnet holds no key for it); absent: the devnet faucet signs a real transaction' }),
  })
  .strict()
  .openapi('DevnetDepositRequest');

const depositBatchRequestSchema = z
  .object({ transfers: z.array(depositRequestSchema).min(1).max(MAX_DEPOSITS_PER_BATCH) })
  .strict()
  .openapi('DevnetDepositBatchRequest', { description: `up to ${MAX_DEPOSITS_PER_BATCH} transfers, on any chains: all mined in the next block of their chain, or none` });

const depositSchema = z.object({ txnHash: z.string(), blockNumber: z.number().int() }).openapi('DevnetDeposit');

export const depositRoute = createRoute({
  method: 'post',
  path: '/devnet/deposits',
  tags,
  summary: 'An incoming transfer, or a batch of them, mined in a new block right away (signed by the devnet faucet unless fromAddress is given)',
  description: `A batch (\`{ transfers: [...] }\`, up to ${MAX_DEPOSITS_PER_BATCH}) is all or none: one invalid transfer is refused (400/422) with \`details.index\` naming it, and nothing is mined.`,
  security: callerSecurity,
  request: { body: jsonBody(z.union([depositRequestSchema, depositBatchRequestSchema])) },
  responses: {
    201: json(
      'The transaction and the block that includes it; for a batch, one per transfer in the order given',
      z.union([depositSchema, z.object({ transfers: z.array(depositSchema) }).openapi('DevnetDepositBatch')]),
    ),
    ...errorResponses(...authenticatedErrors, 400, 422),
  },
});

export const mineRoute = createRoute({
  method: 'post',
  path: '/devnet/blocks',
  tags,
  summary: 'Mine `count` blocks now',
  security: callerSecurity,
  request: { body: jsonBody(z.object({ chainId, count: z.number().int().min(1).max(1000).openapi({ example: 6 }) }).strict().openapi('DevnetMineRequest')) },
  responses: { 200: json('The new head', blockNumberSchema), ...errorResponses(...authenticatedErrors, 400, 422) },
});

export const reorgRoute = createRoute({
  method: 'post',
  path: '/devnet/reorg',
  tags,
  summary: 'Replace the last `depth` blocks with empty ones (their transactions are dropped)',
  security: callerSecurity,
  request: {
    body: jsonBody(
      z
        .object({ chainId, depth: z.number().int().min(1).max(100).openapi({ example: 2, description: '1..min(100, head)' }) })
        .strict()
        .openapi('DevnetReorgRequest'),
    ),
  },
  responses: { 200: json('The head after the reorg (the same height)', blockNumberSchema), ...errorResponses(...authenticatedErrors, 400, 422) },
});

export const faultRoute = createRoute({
  method: 'post',
  path: '/devnet/faults',
  tags,
  summary: 'Make the next `count` broadcasts on the chain fail: rejected by the node, or mined and reverted',
  security: callerSecurity,
  request: {
    body: jsonBody(
      z
        .object({
          chainId,
          fault: z.enum(['broadcast_error', 'revert']),
          count: z.number().int().min(0).max(1000).openapi({ example: 1, description: '0 clears the fault' }),
        })
        .strict()
        .openapi('DevnetFaultRequest'),
    ),
  },
  responses: { 200: json('Set', emptySchema), ...errorResponses(...authenticatedErrors, 400, 422) },
});

export const requireTagRoute = createRoute({
  method: 'post',
  path: '/devnet/require-tag',
  tags,
  summary: 'An XRP account requires a destination tag from now on (RequireDest)',
  security: callerSecurity,
  request: { body: jsonBody(z.object({ chainId, address: z.string().min(1) }).strict().openapi('DevnetRequireTagRequest')) },
  responses: { 200: json('Set', emptySchema), ...errorResponses(...authenticatedErrors, 400, 422) },
});
