import type { Kysely } from 'kysely';
import type { Database } from '../../db/database.js';

/** The person and their organization's name, from the read model. */
export const profileRow = (db: Kysely<Database>, orgId: string, userId: string) =>
  db
    .selectFrom('users')
    .innerJoin('organizations', 'organizations.id', 'users.org_id')
    .select(['users.id', 'users.username', 'organizations.id as orgId', 'organizations.name as orgName'])
    .where('users.id', '=', userId)
    .where('users.org_id', '=', orgId)
    .executeTakeFirstOrThrow();
