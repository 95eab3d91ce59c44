import type { Kysely } from 'kysely';
import type { Database } from '../../db/database.js';

/** The organization's balance rows, one per token it has a ledger of (in no particular order). */
export const balanceRows = (db: Kysely<Database>, orgId: string) =>
  db.selectFrom('balances').select(['chain_id', 'token_id', 'available', 'pending']).where('org_id', '=', orgId).execute();
