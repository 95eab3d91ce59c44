import { createRouter } from '../router.js';
import { accountHandlers, type AccountRouteDependencies } from './handlers.js';
import { depositAddressRoute, listAccountsRoute } from './routes.js';

export type { AccountRouteDependencies } from './handlers.js';

/** GET /payments/deposit-address and GET /accounts: behind authentication (mounted by the app). */
export const accountRoutes = (deps: AccountRouteDependencies) => {
  const handlers = accountHandlers(deps);
  return createRouter().openapi(depositAddressRoute, handlers.depositAddress).openapi(listAccountsRoute, handlers.list);
};
