import type { Kysely } from 'kysely';
import { tokenSummaryOf } from '../../catalog/tokens.js';
import type { Database } from '../../db/database.js';
import type { DepositStatus } from '../../db/tables/deposits.js';
import { decodeCursor, toPage } from '../pagination.js';

type DepositRow = {
  seq: string;
  chain_id: string;
  tx_hash: string;
  token_id: string;
  amount: string;
  account_chain_id: string | null;
  external_user_id: string | null;
  sender_address: string;
  to_address: string;
  output_index: number;
  status: DepositStatus;
  confirmations: number;
  created_at: Date;
  updated_at: Date;
};

/** SPEC §2.3's fields and CONTRACT §6's reconciliation fields. The lists hold attributed deposits only, so the user fields are set. */
const toDeposit = (row: DepositRow) => ({
  chainId: row.chain_id,
  txnHash: row.tx_hash,
  tokenId: row.token_id,
  amount: row.amount,
  accountChainId: row.account_chain_id ?? '',
  externalUserId: row.external_user_id ?? '',
  senderAddress: row.sender_address,
  toAddress: row.to_address,
  outputIndex: row.output_index,
  status: row.status,
  confirmations: row.confirmations,
  Token: tokenSummaryOf(row.token_id),
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

/**
 * A page of the organization's deposits, newest first. Only creditable ones: a below-minimum or
 * unattributed transfer never reaches a balance, and listing it would read as money the user has.
 * A reverted one is listed with its status (CONTRACT §6), so a transfer seen on an explorer that did
 * not count can be matched.
 */
export const depositPage = async (db: Kysely<Database>, orgId: string, options: { userId?: string; limit: number; cursor?: string }) => {
  let query = db
    .selectFrom('deposits')
    .select([
      'seq',
      'chain_id',
      'tx_hash',
      'token_id',
      'amount',
      'account_chain_id',
      'external_user_id',
      'sender_address',
      'to_address',
      'output_index',
      'status',
      'confirmations',
      'created_at',
      'updated_at',
    ])
    .where('org_id', '=', orgId)
    .where('credit', '=', 'credit')
    .orderBy('seq', 'desc')
    .limit(options.limit + 1);
  if (options.userId !== undefined) query = query.where('external_user_id', '=', options.userId);
  if (options.cursor !== undefined) query = query.where('seq', '<', decodeCursor(options.cursor));
  const { page, nextCursor } = toPage(await query.execute(), options.limit);
  return { deposits: page.map(toDeposit), nextCursor };
};
