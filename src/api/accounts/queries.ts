import type { Kysely } from 'kysely';
import type { Database } from '../../db/database.js';
import { decodeCursor, toPage } from '../pagination.js';

type AccountRow = { org_id: string; chain_id: string; external_user_id: string; org_deposit_account_id: string; address: string; destination_tag: string | null; created_at: Date; updated_at: Date };

const toAccount = (row: AccountRow) => ({
  orgId: row.org_id,
  chainId: row.chain_id,
  externalUserId: row.external_user_id,
  orgDepositAccountId: row.org_deposit_account_id,
  properties: row.destination_tag === null ? { address: row.address } : { address: row.address, destinationTag: row.destination_tag },
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

/** A page of the organization's deposit accounts from the read model, newest first. */
export const accountPage = async (db: Kysely<Database>, orgId: string, options: { limit: number; cursor?: string }) => {
  let query = db
    .selectFrom('accounts')
    .selectAll()
    .where('org_id', '=', orgId)
    .orderBy('seq', 'desc')
    .limit(options.limit + 1);
  if (options.cursor !== undefined) query = query.where('seq', '<', decodeCursor(options.cursor));
  const { page, nextCursor } = toPage(await query.execute(), options.limit);
  return { accounts: page.map(toAccount), nextCursor };
};
