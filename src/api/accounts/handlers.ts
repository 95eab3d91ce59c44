import type { RouteHandler } from '@hono/zod-openapi';
import type { Kysely } from 'kysely';
import { getOrCreateDepositAccount, type DepositAccountServices } from '../../application/deposit-accounts.js';
import type { Database } from '../../db/database.js';
import type { AppEnv } from '../request-context.js';
import { accountPage } from './queries.js';
import type { depositAddressRoute, listAccountsRoute } from './routes.js';

export interface AccountRouteDependencies {
  db: Kysely<Database>;
  accounts: DepositAccountServices;
  /** throws the SPEC chain and token errors (INVALID_CHAIN, CHAIN_NOT_ENABLED, INVALID_TOKEN, …) */
  checkDepositTarget(orgId: string, chainId: string, tokenId: string): Promise<unknown>;
}

export const accountHandlers = ({ db, accounts, checkDepositTarget }: AccountRouteDependencies) => {
  const depositAddress: RouteHandler<typeof depositAddressRoute, AppEnv> = async (c) => {
    const { chainId, tokenId, userId } = c.req.valid('query');
    const { orgId, userId: actor } = c.get('principal');
    await checkDepositTarget(orgId, chainId, tokenId);
    // answered from the account's own stream: consistent at once, whatever the projection's lag
    const { account } = await getOrCreateDepositAccount(accounts, { orgId, chainId, externalUserId: userId }, { actor, orgId, requestId: c.get('requestId') });
    const { orgDepositAccountId, properties, createdAt } = account;
    return c.json({ address: { orgId, chainId, externalUserId: userId, orgDepositAccountId, properties, createdAt, updatedAt: createdAt } }, 200);
  };

  const list: RouteHandler<typeof listAccountsRoute, AppEnv> = async (c) => {
    const { limit, cursor } = c.req.valid('query');
    return c.json(await accountPage(db, c.get('principal').orgId, { limit, cursor }), 200);
  };

  return { depositAddress, list };
};
