import type { ColumnType } from 'kysely';
import type { WithdrawalRecord, WithdrawalStatus } from '../../domain/withdrawal/withdrawal.js';

/** One row per withdrawal (projection `withdrawals`). Amounts stay decimal strings. */
export interface WithdrawalsTable {
  id: string;
  /** the global position of the request: newest-first pages, identical on rebuild */
  seq: ColumnType<string, string, never>;
  org_id: string;
  status: WithdrawalStatus;
  chain_id: string;
  token_id: string;
  /** numeric(78,0), base units */
  amount: string;
  reference: string;
  txn_hash: string | null;
  /** the withdrawal as its events leave it: every answer and webhook payload is drawn from it */
  state: ColumnType<WithdrawalRecord, string, string>;
  created_at: ColumnType<Date, Date, never>;
  updated_at: ColumnType<Date, Date, Date>;
}
