import type { MiddlewareHandler } from 'hono';
import type { Kysely } from 'kysely';
import { loadOrganizationState, rememberedOrganizationState, type OrganizationStates } from '../../application/organization-states.js';
import type { Database } from '../../db/database.js';
import type { ActiveOrganization, Organization } from '../../domain/organization/organization.js';
import type { EventStore } from '../../eventstore/port.js';
import { BoundedMap } from '../../lib/bounded-map.js';
import { ApiKeyDigests, apiKeyId, digestsMatch } from '../../security/api-keys.js';
import { verifyAccessToken } from '../../security/access-tokens.js';
import type { Keyring } from '../../security/keyring.js';
import { ApiError } from '../errors.js';
import type { AppEnv } from '../request-context.js';
import { apiKeyOwner } from './queries.js';

export interface AuthenticationDependencies {
  db: Kysely<Database>;
  store: EventStore;
  organizationStates?: OrganizationStates | undefined;
  keyring: Keyring;
  clock: () => Date;
}

/** how many API key ids this process remembers the organization of */
const KNOWN_KEY_OWNERS = 10_000;

const invalidApiKey = () => new ApiError('INVALID_API_KEY', 401, 'The API key is invalid or has been rotated');
const invalidToken = () => new ApiError('INVALID_TOKEN', 401, 'The access token is invalid or expired');

type Acceptance = (organization: ActiveOrganization) => boolean;

const acceptedBy = (accepts: Acceptance, state: Organization) => (state.status === 'Active' && accepts(state) ? state : undefined);

/**
 * The organization, when `accepts` it: first as memory holds it, and when memory does not accept
 * it, read again from its stream (memory may lag another process's change by a notification, so a
 * refusal is never decided on it alone); undefined when the stream does not accept it either.
 */
const acceptedOrganization = async (dependencies: AuthenticationDependencies, orgId: string, accepts: Acceptance) => {
  const { state, fromMemory } = await loadOrganizationState(dependencies, orgId);
  return acceptedBy(accepts, state) ?? (fromMemory ? acceptedBy(accepts, (await loadOrganizationState(dependencies, orgId, { fresh: true })).state) : undefined);
};

/**
 * The organization as memory holds it, when that accepts it, at once (most requests: no read and
 * no promise); undefined sends the caller to acceptedOrganization, which decides as before.
 */
const acceptedInMemory = (dependencies: AuthenticationDependencies, orgId: string, accepts: Acceptance) => {
  const remembered = rememberedOrganizationState(dependencies, orgId);
  return remembered && acceptedBy(accepts, remembered.state);
};

const usernameOf = (organization: ActiveOrganization, userId: string) => organization.users.find((user) => user.userId === userId)?.username;

/**
 * Every route behind this has a principal: an API key (`x-api-key`, acting as its owner) or a
 * person's access token (`Authorization: Bearer`). A key is checked against its organization's
 * stream, which names the one current key: its id and keyed digest (compared in constant time).
 * The organization comes from memory, dropped when its stream changes: a rotated-away key is
 * refused at once in the process that rotated (its append drops the organization before the
 * rotation answers) and in every other process when the store's notification arrives. Which
 * organization a key id belongs to never changes, so that is remembered (bounded) from the
 * `api_keys` read model, and so is the digest of the last key presented under each id (a digest
 * is the same for the same key; whether it is current is decided as above, every time).
 */
export const authenticate = (dependencies: AuthenticationDependencies): MiddlewareHandler<AppEnv> => {
  const { db, keyring, clock } = dependencies;
  const keyOwners = new BoundedMap<string, string>(KNOWN_KEY_OWNERS);
  const keyDigests = new ApiKeyDigests((apiKey) => keyring.apiKeyDigest(apiKey), KNOWN_KEY_OWNERS);
  /** the key's organization from the read model, remembered (asked only when memory has none) */
  const readOwner = async (keyId: string) => {
    const owner = await apiKeyOwner(db, keyId);
    if (owner !== undefined) keyOwners.set(keyId, owner);
    return owner;
  };
  return async (c, next) => {
    const apiKey = c.req.header('x-api-key');
    const authorization = c.req.header('authorization');
    if (apiKey !== undefined) {
      const keyId = apiKeyId(apiKey);
      const orgId = keyId ? (keyOwners.get(keyId) ?? (await readOwner(keyId))) : undefined;
      if (!keyId || orgId === undefined) throw invalidApiKey();
      const digest = keyDigests.digest(keyId, apiKey);
      const current: Acceptance = ({ apiKey: held }) => held?.keyId === keyId && digestsMatch(digest, held.keyDigest);
      const organization = acceptedInMemory(dependencies, orgId, current) ?? (await acceptedOrganization(dependencies, orgId, current));
      const userId = organization?.apiKey?.userId;
      const username = organization && userId !== undefined ? usernameOf(organization, userId) : undefined;
      if (userId === undefined || username === undefined) throw invalidApiKey();
      c.set('principal', { orgId, userId, via: 'apiKey', username });
    } else if (authorization !== undefined) {
      const [scheme, token] = authorization.split(' ');
      if (scheme?.toLowerCase() !== 'bearer' || !token) throw invalidToken();
      const claims = await verifyAccessToken(keyring.jwtKey, token, clock());
      const organization = claims ? await acceptedOrganization(dependencies, claims.orgId, (candidate) => usernameOf(candidate, claims.userId) !== undefined) : undefined;
      const username = claims && organization ? usernameOf(organization, claims.userId) : undefined;
      if (!claims || username === undefined) throw invalidToken();
      c.set('principal', { orgId: claims.orgId, userId: claims.userId, via: 'jwt', username });
    } else {
      throw new ApiError('UNAUTHORIZED', 401, 'Credentials are required: an x-api-key header or a Bearer access token');
    }
    await next();
  };
};

/** CONTRACT §3: some actions only a person may take (rotate the API key, read the profile, approve). */
export const requirePerson = (): MiddlewareHandler<AppEnv> => async (c, next) => {
  if (c.get('principal').via !== 'jwt') throw new ApiError('FORBIDDEN', 403, 'This action needs a person: use a Bearer access token from /auth/login');
  await next();
};
