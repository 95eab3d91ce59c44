import type { RouteHandler } from '@hono/zod-openapi';
import type { Kysely } from 'kysely';
import { getOrCreateDepositAccount, type DepositAccountServices } from '../../application/deposit-accounts.js';
import type { Database } from '../../db/database.js';
import { decodeCursor, toPage } from '../pagination.js';
import type { AppEnv } from '../request-context.js';
import { createRouter } from '../router.js';
import { depositAddressRoute, listAccountsRoute } from './routes.js';

export interface AccountRouteDependencies {
  db: Kysely<Database>;
  accounts: DepositAccountServices;
  /** throws the SPEC chain and token errors (INVALID_CHAIN, CHAIN_NOT_ENABLED, INVALID_TOKEN, …) */
  checkDepositTarget(orgId: string, chainId: string, tokenId: string): Promise<unknown>;
}

type AccountRow = { org_id: string; chain_id: string; external_user_id: string; org_deposit_account_id: string; address: string; destination_tag: string | null; created_at: Date; updated_at: Date };

const toAccount = (row: AccountRow) => ({
  orgId: row.org_id,
  chainId: row.chain_id,
  externalUserId: row.external_user_id,
  orgDepositAccountId: row.org_deposit_account_id,
  properties: row.destination_tag === null ? { address: row.address } : { address: row.address, destinationTag: row.destination_tag },
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

export const accountRoutes = ({ db, accounts, checkDepositTarget }: AccountRouteDependencies) => {
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
    let query = db
      .selectFrom('accounts')
      .selectAll()
      .where('org_id', '=', c.get('principal').orgId)
      .orderBy('seq', 'desc')
      .limit(limit + 1);
    if (cursor !== undefined) query = query.where('seq', '<', decodeCursor(cursor));
    const { page, nextCursor } = toPage(await query.execute(), limit);
    return c.json({ accounts: page.map(toAccount), nextCursor }, 200);
  };

  return createRouter().openapi(depositAddressRoute, depositAddress).openapi(listAccountsRoute, list);
};
