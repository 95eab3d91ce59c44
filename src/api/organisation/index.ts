import type { OrganizationServices } from '../../application/organizations.js';
import { requirePerson } from '../middleware/authenticate.js';
import { createRouter } from '../router.js';
import { organisationHandlers } from './handlers.js';
import { getOrganizationRoute, rotateApiKeyRoute, rotateSigningSecretRoute, setMinSignersRoute, setWebhookRoute } from './routes.js';

/** /organisation: behind authentication; the API key rotation also needs a person. */
export const organisationRoutes = (services: OrganizationServices) => {
  const handlers = organisationHandlers(services);
  const router = createRouter();
  router.use('/organisation/api-key', requirePerson());
  return router
    .openapi(getOrganizationRoute, handlers.getOrganization)
    .openapi(rotateApiKeyRoute, handlers.rotateKey)
    .openapi(setWebhookRoute, handlers.setWebhook)
    .openapi(rotateSigningSecretRoute, handlers.rotateSecret)
    .openapi(setMinSignersRoute, handlers.setMinSigners);
};
