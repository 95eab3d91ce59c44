import type { RouteHandler } from '@hono/zod-openapi';
import {
  changeMinWithdrawalSigners,
  rotateApiKey,
  rotateWebhookSigningSecret,
  setWebhookUrl,
  type OrganizationServices,
} from '../../application/organizations.js';
import { waitForProjection } from '../../application/projection-waiter.js';
import { ORGANIZATIONS_PROJECTION } from '../../projections/organizations.js';
import { decryptSecret, secretPurpose } from '../../security/secret-box.js';
import { commandMetadataOf, type AppEnv } from '../request-context.js';
import { organizationRow } from './queries.js';
import type { getOrganizationRoute, rotateApiKeyRoute, rotateSigningSecretRoute, setMinSignersRoute, setWebhookRoute } from './routes.js';

/** the answer reflects the change in the read models (a rotated key is refused from here on) */
const visible = (services: OrganizationServices, position: bigint | null) =>
  position === null ? Promise.resolve() : waitForProjection(services.db, ORGANIZATIONS_PROJECTION, position);

export const organisationHandlers = (services: OrganizationServices) => {
  const getOrganization: RouteHandler<typeof getOrganizationRoute, AppEnv> = async (c) => {
    const { orgId } = c.get('principal');
    const row = await organizationRow(services.db, orgId);
    return c.json(
      {
        id: row.id,
        name: row.name,
        webhookUrl: row.webhook_url,
        webhookSigningSecret: decryptSecret(services.keyring.encryptionKey, row.webhook_signing_secret_encrypted, secretPurpose.webhookSigningSecret(orgId)),
        minWithdrawalSigners: row.min_withdrawal_signers,
        createdAt: row.created_at.toISOString(),
        updatedAt: row.updated_at.toISOString(),
      },
      200,
    );
  };

  const rotateKey: RouteHandler<typeof rotateApiKeyRoute, AppEnv> = async (c) => {
    const { orgId, userId } = c.get('principal');
    const { apiKey, position } = await rotateApiKey(services, orgId, userId, commandMetadataOf(c));
    await visible(services, position);
    return c.json({ apiKey }, 200);
  };

  const setWebhook: RouteHandler<typeof setWebhookRoute, AppEnv> = async (c) => {
    const { position } = await setWebhookUrl(services, c.get('principal').orgId, c.req.valid('json').webhookUrl, commandMetadataOf(c));
    await visible(services, position);
    return c.json({}, 200);
  };

  const rotateSecret: RouteHandler<typeof rotateSigningSecretRoute, AppEnv> = async (c) => {
    const { webhookSigningSecret, position } = await rotateWebhookSigningSecret(services, c.get('principal').orgId, commandMetadataOf(c));
    await visible(services, position);
    return c.json({ webhookSigningSecret }, 200);
  };

  const setMinSigners: RouteHandler<typeof setMinSignersRoute, AppEnv> = async (c) => {
    const { position } = await changeMinWithdrawalSigners(services, c.get('principal').orgId, c.req.valid('json').minWithdrawalSigners, commandMetadataOf(c));
    await visible(services, position);
    return c.json({}, 200);
  };

  return { getOrganization, rotateKey, setWebhook, rotateSecret, setMinSigners };
};
