import { login, UnknownUsername } from '../../application/login.js';
import type { OrganizationServices } from '../../application/organizations.js';
import { DomainError } from '../../errors.js';
import { rateLimited } from '../middleware/rate-limit.js';
import { clientAddressOf, type LoginLimits } from './login-limits.js';
import { createRouter } from '../router.js';
import { loginRoute, profileRoute } from './routes.js';

/** POST /auth/login is public; failures are limited per username and client address (LOGIN_RATE_LIMIT_PER_MINUTE, login-limits.ts). */
export const loginRoutes = (services: OrganizationServices, limits: LoginLimits) =>
  createRouter().openapi(loginRoute, async (c) => {
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
  });

/** GET /auth/profile, behind authentication and requirePerson. */
export const profileRoutes = (services: OrganizationServices) =>
  createRouter().openapi(profileRoute, async (c) => {
    const { userId, orgId } = c.get('principal');
    const row = await services.db
      .selectFrom('users')
      .innerJoin('organizations', 'organizations.id', 'users.org_id')
      .select(['users.id', 'users.username', 'organizations.id as orgId', 'organizations.name as orgName'])
      .where('users.id', '=', userId)
      .where('users.org_id', '=', orgId)
      .executeTakeFirstOrThrow();
    return c.json({ id: row.id, username: row.username, org: { id: row.orgId, name: row.orgName } }, 200);
  });
