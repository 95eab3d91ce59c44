import type { Kysely } from 'kysely';
import type { Database } from '../../db/database.js';

/** The organization's read-model row (its webhook signing secret still sealed). */
export const organizationRow = (db: Kysely<Database>, orgId: string) =>
  db.selectFrom('organizations').selectAll().where('id', '=', orgId).executeTakeFirstOrThrow();
