import type { Kysely } from 'kysely';
import type { Database } from '../../db/database.js';
import { createRouter } from '../router.js';
import { paymentHandlers } from './handlers.js';
import { listPaymentsRoute, listUserDepositsRoute } from './routes.js';

/** GET /payments and GET /payments/:userId/deposits (GET /payments/deposit-address is the accounts router's: one segment fewer). */
export const paymentRoutes = (deps: { db: Kysely<Database> }) => {
  const handlers = paymentHandlers(deps);
  return createRouter().openapi(listPaymentsRoute, handlers.listPayments).openapi(listUserDepositsRoute, handlers.listUserDeposits);
};
