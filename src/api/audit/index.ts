import type { EventStore } from '../../eventstore/port.js';
import type { Keyring } from '../../security/keyring.js';
import { createRouter } from '../router.js';
import { auditHandlers, auditPublicKeyHandler, withdrawalHistoryHandler, type AuditDependencies } from './handlers.js';
import { auditEventsRoute, auditHeadRoute, auditPublicKeyRoute, withdrawalHistoryRoute } from './routes.js';

/** GET /audit/events and GET /audit/head: behind authentication (mounted by the app). */
export const auditRoutes = (dependencies: AuditDependencies) => {
  const handlers = auditHandlers(dependencies);
  return createRouter().openapi(auditEventsRoute, handlers.exportEvents).openapi(auditHeadRoute, handlers.head);
};

/** GET /audit/public-key, no credentials. Mounted before /audit/* is protected. */
export const auditPublicKeyRoutes = (keyring: Keyring) => createRouter().openapi(auditPublicKeyRoute, auditPublicKeyHandler(keyring));

/** GET /withdrawals/{id}/history (CONTRACT §9): behind authentication, with the withdrawals. */
export const withdrawalHistoryRoutes = (dependencies: { store: EventStore }) => createRouter().openapi(withdrawalHistoryRoute, withdrawalHistoryHandler(dependencies));
