import type { Kysely } from 'kysely';
import type { Database } from '../../db/database.js';
import { withdrawalResource } from '../../domain/withdrawal/resource.js';
import type { WithdrawalStatus } from '../../domain/withdrawal/withdrawal.js';
import { decodeCursor, toPage } from '../pagination.js';

/** A page of the organization's withdrawals from the read model, newest first, optionally in one status. */
export const withdrawalPage = async (db: Kysely<Database>, orgId: string, options: { status?: WithdrawalStatus; limit: number; cursor?: string }) => {
  let query = db
    .selectFrom('withdrawals')
    .select(['seq', 'state'])
    .where('org_id', '=', orgId)
    .orderBy('seq', 'desc')
    .limit(options.limit + 1);
  if (options.status !== undefined) query = query.where('status', '=', options.status);
  if (options.cursor !== undefined) query = query.where('seq', '<', decodeCursor(options.cursor));
  const { page, nextCursor } = toPage(await query.execute(), options.limit);
  return { withdrawals: page.map((row) => withdrawalResource(row.state)), nextCursor };
};
