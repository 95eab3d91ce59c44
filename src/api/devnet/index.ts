import type { Devnet } from '../../chains/devnet/index.js';
import { createRouter } from '../router.js';
import { devnetHandlers } from './handlers.js';
import { depositRoute, faultRoute, mineRoute, reorgRoute, requireTagRoute } from './routes.js';

/** /devnet/* (CONTRACT §8): mounted by the app outside production only, behind authentication. */
export const devnetRoutes = (devnet: Devnet) => {
  const handlers = devnetHandlers(devnet);
  return createRouter()
    .openapi(depositRoute, handlers.deposit)
    .openapi(mineRoute, handlers.mine)
    .openapi(reorgRoute, handlers.reorg)
    .openapi(faultRoute, handlers.fault)
    .openapi(requireTagRoute, handlers.requireTag);
};
