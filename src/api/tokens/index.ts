import type { ChainRouteDependencies } from '../chains/index.js';
import { createRouter } from '../router.js';
import { tokenHandlers } from './handlers.js';
import { listTokensRoute } from './routes.js';

/** /tokens: behind authentication (mounted by the app); `enabled` is the caller’s organization’s. */
export const tokenRoutes = (deps: ChainRouteDependencies) => createRouter().openapi(listTokensRoute, tokenHandlers(deps).list);
