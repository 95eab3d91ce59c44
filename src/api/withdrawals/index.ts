import type { WithdrawalServices } from '../../application/withdrawals.js';
import { requirePerson } from '../middleware/authenticate.js';
import { createRouter } from '../router.js';
import { withdrawalHandlers } from './handlers.js';
import { approveWithdrawalsRoute, approveWithdrawalRoute, cancelWithdrawalRoute, createWithdrawalRoute, getWithdrawalRoute, listWithdrawalsRoute } from './routes.js';

/** SPEC §4.5 and CONTRACT §4: /withdrawals. Approval is a person’s step-up action (an API key is 403). */
export const withdrawalRoutes = (services: WithdrawalServices) => {
  const handlers = withdrawalHandlers(services);
  const router = createRouter();
  router.use('/withdrawals/:id/approve', requirePerson());
  router.use('/withdrawals/approve', requirePerson());
  return router
    .openapi(createWithdrawalRoute, handlers.create)
    .openapi(listWithdrawalsRoute, handlers.list)
    .openapi(getWithdrawalRoute, handlers.get)
    .openapi(cancelWithdrawalRoute, handlers.cancel)
    .openapi(approveWithdrawalRoute, handlers.approve)
    .openapi(approveWithdrawalsRoute, handlers.approveMany);
};
