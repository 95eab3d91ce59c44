import { createRouter } from '../router.js';
import { webhookHandlers, type WebhookRouteDependencies } from './handlers.js';
import { listDeliveriesRoute, redeliverRoute } from './routes.js';

export type { WebhookRouteDependencies } from './handlers.js';

/** /webhooks: behind authentication (mounted by the app); every query is the caller's organization's. */
export const webhookRoutes = (deps: WebhookRouteDependencies) => {
  const handlers = webhookHandlers(deps);
  return createRouter().openapi(listDeliveriesRoute, handlers.list).openapi(redeliverRoute, handlers.resend);
};
