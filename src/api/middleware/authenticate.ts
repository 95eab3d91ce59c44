import type { MiddlewareHandler } from 'hono';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/database.js';
import { apiKeyId, digestsMatch } from '../../security/api-keys.js';
import { verifyAccessToken } from '../../security/access-tokens.js';
import type { Keyring } from '../../security/keyring.js';
import { ApiError } from '../errors.js';
import type { AppEnv } from '../request-context.js';
import { apiKeyById, userInOrganization } from './queries.js';

export interface AuthenticationDependencies {
  db: Kysely<Database>;
  keyring: Keyring;
  clock: () => Date;
}

const invalidApiKey = () => new ApiError('INVALID_API_KEY', 401, 'The API key is invalid or has been rotated');
const invalidToken = () => new ApiError('INVALID_TOKEN', 401, 'The access token is invalid or expired');

/**
 * Every route behind this has a principal: an API key (`x-api-key`, acting as its owner) or a
 * person's access token (`Authorization: Bearer`). Keys are found by id and compared as keyed
 * digests in constant time; a rotated-away key is refused at once (its row is revoked in the same
 * projection the rotation waits for).
 */
export const authenticate =
  ({ db, keyring, clock }: AuthenticationDependencies): MiddlewareHandler<AppEnv> =>
  async (c, next) => {
    const apiKey = c.req.header('x-api-key');
    const authorization = c.req.header('authorization');
    if (apiKey !== undefined) {
      const keyId = apiKeyId(apiKey);
      const row = keyId ? await apiKeyById(db, keyId) : undefined;
      if (!row || row.revoked_at !== null || !digestsMatch(keyring.apiKeyDigest(apiKey), row.key_digest)) throw invalidApiKey();
      c.set('principal', { orgId: row.org_id, userId: row.user_id, via: 'apiKey', username: row.username });
    } else if (authorization !== undefined) {
      const [scheme, token] = authorization.split(' ');
      if (scheme?.toLowerCase() !== 'bearer' || !token) throw invalidToken();
      const claims = await verifyAccessToken(keyring.jwtKey, token, clock());
      const user = claims ? await userInOrganization(db, claims.orgId, claims.userId) : undefined;
      if (!claims || !user) throw invalidToken();
      c.set('principal', { orgId: claims.orgId, userId: claims.userId, via: 'jwt', username: user.username });
    } else {
      throw new ApiError('UNAUTHORIZED', 401, 'Credentials are required: an x-api-key header or a Bearer access token');
    }
    await next();
  };

/** CONTRACT §3: some actions only a person may take (rotate the API key, read the profile, approve). */
export const requirePerson = (): MiddlewareHandler<AppEnv> => async (c, next) => {
  if (c.get('principal').via !== 'jwt') throw new ApiError('FORBIDDEN', 403, 'This action needs a person: use a Bearer access token from /auth/login');
  await next();
};
