import type { Kysely } from 'kysely';
import type { Database } from '../../db/database.js';

/** The organization the API key with this id was issued to (rotated away or not); undefined when there is none. */
export const apiKeyOwner = async (db: Kysely<Database>, keyId: string): Promise<string | undefined> =>
  (await db.selectFrom('api_keys').select('org_id').where('key_id', '=', keyId).executeTakeFirst())?.org_id;
