import { createRouter } from '../router.js';
import { gasStationHandlers, type GasStationDependencies } from './handlers.js';
import { gasStationRoute } from './routes.js';

export type { GasStationDependencies } from './handlers.js';

/** GET /gas-station (SPEC §4.6): behind authentication, mounted by the app when it has the wallets and gateways. */
export const gasStationRoutes = (deps: GasStationDependencies) => createRouter().openapi(gasStationRoute, gasStationHandlers(deps).gasStation);
