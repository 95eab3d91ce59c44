import { createRoute, z } from '@hono/zod-openapi';
import { authenticatedErrors, callerSecurity, errorResponses } from '../router.js';

export const gasWalletSchema = z
  .object({
    chainId: z.string().openapi({ example: 'eip155:1' }),
    address: z.string().openapi({ description: 'the address to fund with the native currency', example: '0x4A0a3a3C2A5B9d9bA2b7D8dC1f5C4d5E6f708192' }),
    balance: z.string().openapi({ description: 'base units of the native currency, read from the chain', example: '172000000000000' }),
    Chain: z.object({
      name: z.string().openapi({ example: 'Ethereum' }),
      properties: z.object({
        nativeCurrency: z.string().openapi({ example: 'ETH' }),
        decimals: z.number().int().openapi({ example: 18 }),
      }),
    }),
  })
  .openapi('GasWallet');

export const gasStationRoute = createRoute({
  method: 'get',
  path: '/gas-station',
  tags: ['Gas wallets'],
  summary: 'The organization’s gas wallets: one per enabled EVM and Tron chain (Bitcoin and XRP pay fees from the funds themselves)',
  description:
    'A gas wallet pays the native fee of token sweeps (it tops deposit addresses up with exactly the fee first). Fund it by sending the native currency to `address`; a sweep that lacked gas resumes by itself once the balance covers it.',
  security: callerSecurity,
  responses: {
    200: { description: 'The gas wallets, in SPEC’s chain order', content: { 'application/json': { schema: z.object({ gasWallets: z.array(gasWalletSchema) }).openapi('GasStation') } } },
    ...errorResponses(...authenticatedErrors, 503),
  },
});
