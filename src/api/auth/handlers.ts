import type { RouteHandler } from '@hono/zod-openapi';
import { login, UnknownUsername } from '../../application/login.js';
import type { OrganizationServices } from '../../application/organizations.js';
import { DomainError } from '../../errors.js';
import { rateLimited } from '../middleware/rate-limit.js';
import type { AppEnv } from '../request-context.js';
import { clientAddressOf, type LoginLimits } from './login-limits.js';
import { profileRow } from './queries.js';
import type { loginRoute, profileRoute } from './routes.js';

/** Failures are limited per username and client address (LOGIN_RATE_LIMIT_PER_MINUTE, login-limits.ts). */
export const loginHandler =
  (services: OrganizationServices, limits: LoginLimits): RouteHandler<typeof loginRoute, AppEnv> =>
  async (c) => {
    const body = c.req.valid('json');
    const address = clientAddressOf(c);
    const verdict = await limits.admit(body.username, address);
    if (!verdict.allowed) throw rateLimited(verdict.retryAfterSeconds);
    try {
      const checked = await limits.withPasswordCheck(() => login(services, body, { requestId: c.get('requestId') }));
      if (!checked) throw rateLimited(1);
      limits.succeeded(body.username, address);
      return c.json({ accessToken: checked.done.accessToken }, 200);
    } catch (error) {
      if (error instanceof DomainError && (error.code === 'UNAUTHORIZED' || error.code === 'INVALID_TOTP')) limits.failed(body.username, address, { knownUser: !(error instanceof UnknownUsername) });
      throw error;
    }
  };

export const profileHandler =
  (services: OrganizationServices): RouteHandler<typeof profileRoute, AppEnv> =>
  async (c) => {
    const { userId, orgId } = c.get('principal');
    const row = await profileRow(services.db, orgId, userId);
    return c.json({ id: row.id, username: row.username, org: { id: row.orgId, name: row.orgName } }, 200);
  };
