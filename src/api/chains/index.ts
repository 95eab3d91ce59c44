import { createRouter } from '../router.js';
import { chainHandlers, type ChainRouteDependencies } from './handlers.js';
import { getChainRoute, listChainsRoute } from './routes.js';

export type { ChainRouteDependencies } from './handlers.js';

/** /chains: behind authentication (mounted by the app); `enabled` is the caller’s organization’s. */
export const chainRoutes = (deps: ChainRouteDependencies) => {
  const handlers = chainHandlers(deps);
  return createRouter().openapi(listChainsRoute, handlers.list).openapi(getChainRoute, handlers.get);
};
