import type { RouteHandler } from '@hono/zod-openapi';
import { withdrawalDetail, withdrawalResource } from '../../domain/withdrawal/resource.js';
import { approveWithdrawal, approveWithdrawals, cancelWithdrawal, createWithdrawal, loadWithdrawal, type WithdrawalServices } from '../../application/withdrawals.js';
import { statusOf } from '../error-statuses.js';
import type { WithdrawalStatus } from '../../domain/withdrawal/withdrawal.js';
import { commandMetadataOf, type AppEnv } from '../request-context.js';
import { withdrawalPage } from './queries.js';
import type { approveWithdrawalsRoute, approveWithdrawalRoute, cancelWithdrawalRoute, createWithdrawalRoute, getWithdrawalRoute, listWithdrawalsRoute } from './routes.js';

const callerOf = (c: { get(key: 'principal'): { userId: string; orgId: string } }) => ({ orgId: c.get('principal').orgId, userId: c.get('principal').userId });

/** Commands and single reads answer from the withdrawal's stream (consistent at once); the list from the read model. */
export const withdrawalHandlers = (services: WithdrawalServices) => {
  const create: RouteHandler<typeof createWithdrawalRoute, AppEnv> = async (c) => {
    const withdrawal = await createWithdrawal(services, callerOf(c), c.req.valid('json'), commandMetadataOf(c));
    return c.json({ withdrawal: withdrawalResource(withdrawal) }, 201);
  };

  const list: RouteHandler<typeof listWithdrawalsRoute, AppEnv> = async (c) => {
    const { status, limit, cursor } = c.req.valid('query');
    return c.json(await withdrawalPage(services.db, c.get('principal').orgId, { status: status as WithdrawalStatus | undefined, limit, cursor }), 200);
  };

  const get: RouteHandler<typeof getWithdrawalRoute, AppEnv> = async (c) => {
    const { state } = await loadWithdrawal(services, c.get('principal').orgId, c.req.valid('param').id);
    return c.json(withdrawalDetail(state), 200);
  };

  const cancel: RouteHandler<typeof cancelWithdrawalRoute, AppEnv> = async (c) => {
    const { id, status, txnError, updatedAt } = await cancelWithdrawal(services, callerOf(c), c.req.valid('param').id, commandMetadataOf(c));
    return c.json({ withdrawal: { id, status, txnError, updatedAt } }, 200);
  };

  const approve: RouteHandler<typeof approveWithdrawalRoute, AppEnv> = async (c) => {
    const withdrawal = await approveWithdrawal(services, callerOf(c), c.req.valid('param').id, c.req.valid('json').totpCode, commandMetadataOf(c));
    return c.json({ withdrawal: withdrawalResource(withdrawal) }, 200);
  };

  const approveMany: RouteHandler<typeof approveWithdrawalsRoute, AppEnv> = async (c) => {
    const { ids, totpCode } = c.req.valid('json');
    const results = await approveWithdrawals(services, callerOf(c), ids, totpCode, commandMetadataOf(c));
    return c.json(
      {
        results: results.map((result) =>
          'withdrawal' in result
            ? { id: result.id, withdrawal: withdrawalResource(result.withdrawal) }
            : { id: result.id, error: { error: result.error.code, message: result.error.message, statusCode: statusOf(result.error.code), ...(result.error.details ? { details: result.error.details } : {}) } },
        ),
      },
      200,
    );
  };

  return { create, list, get, cancel, approve, approveMany };
};
