import type { Kysely } from 'kysely';
import type { Database } from '../../db/database.js';

/** The API key with this id, its owner's username, its keyed digest and whether it was revoked; undefined when there is none. */
export const apiKeyById = (db: Kysely<Database>, keyId: string) =>
  db
    .selectFrom('api_keys')
    .innerJoin('users', 'users.id', 'api_keys.user_id')
    .select(['api_keys.org_id', 'api_keys.user_id', 'api_keys.key_digest', 'api_keys.revoked_at', 'users.username'])
    .where('api_keys.key_id', '=', keyId)
    .executeTakeFirst();

/** The organization's user with this id; undefined when there is none. */
export const userInOrganization = (db: Kysely<Database>, orgId: string, userId: string) =>
  db.selectFrom('users').select(['id', 'username']).where('id', '=', userId).where('org_id', '=', orgId).executeTakeFirst();
