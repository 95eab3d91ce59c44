import type { RouteHandler } from '@hono/zod-openapi';
import type { Kysely } from 'kysely';
import { TOKENS, tokenSummaryOf } from '../../catalog/tokens.js';
import type { Database } from '../../db/database.js';
import type { AppEnv } from '../request-context.js';
import { balanceRows } from './queries.js';
import type { portfolioRoute } from './routes.js';

const catalogOrder = new Map(TOKENS.map((token, position) => [token.id, position]));

export const portfolioHandlers = ({ db }: { db: Kysely<Database> }) => {
  const portfolio: RouteHandler<typeof portfolioRoute, AppEnv> = async (c) => {
    const rows = await balanceRows(db, c.get('principal').orgId);
    rows.sort((a, b) => (catalogOrder.get(a.token_id) ?? Infinity) - (catalogOrder.get(b.token_id) ?? Infinity));
    const balances = rows.map((row) => ({ chainId: row.chain_id, tokenId: row.token_id, available: row.available, pending: row.pending, Token: tokenSummaryOf(row.token_id) }));
    return c.json({ balances }, 200);
  };

  return { portfolio };
};
