import type { Kysely } from 'kysely';
import type { Database } from '../../db/database.js';
import { createRouter } from '../router.js';
import { portfolioHandlers } from './handlers.js';
import { portfolioRoute } from './routes.js';

/** GET /portfolio: one entry per token the organization has a ledger of, in the catalog's order. */
export const portfolioRoutes = (deps: { db: Kysely<Database> }) => createRouter().openapi(portfolioRoute, portfolioHandlers(deps).portfolio);
