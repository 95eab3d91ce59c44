import type { RouteHandler } from '@hono/zod-openapi';
import type { Kysely } from 'kysely';
import { checkExternalUserId } from '../../application/deposit-accounts.js';
import type { Database } from '../../db/database.js';
import type { AppEnv } from '../request-context.js';
import { depositPage } from './queries.js';
import type { listPaymentsRoute, listUserDepositsRoute } from './routes.js';

export const paymentHandlers = ({ db }: { db: Kysely<Database> }) => {
  const listPayments: RouteHandler<typeof listPaymentsRoute, AppEnv> = async (c) => {
    const { userId, limit, cursor } = c.req.valid('query');
    if (userId !== undefined) checkExternalUserId(userId);
    const { deposits, nextCursor } = await depositPage(db, c.get('principal').orgId, { userId, limit, cursor });
    return c.json({ payments: deposits, nextCursor }, 200);
  };

  const listUserDeposits: RouteHandler<typeof listUserDepositsRoute, AppEnv> = async (c) => {
    const { userId } = c.req.valid('param');
    const { limit, cursor } = c.req.valid('query');
    checkExternalUserId(userId);
    return c.json(await depositPage(db, c.get('principal').orgId, { userId, limit, cursor }), 200);
  };

  return { listPayments, listUserDeposits };
};
