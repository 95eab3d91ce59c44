import type { ColumnType } from 'kysely';

export type DepositStatus = 'detected' | 'confirmed' | 'reverted';

/** Detected deposits that were not reverted (projection `deposits`). Amounts stay decimal strings. */
export interface DepositsTable {
  chain_id: string;
  tx_hash: string;
  output_index: number;
  /** the global position of the detection: newest-first pages, identical on rebuild */
  seq: ColumnType<string, string, never>;
  /** null for an unattributed deposit (no account owns the address) */
  org_id: string | null;
  external_user_id: string | null;
  account_chain_id: string | null;
  token_id: string;
  /** numeric(78,0), base units */
  amount: string;
  sender_address: string;
  to_address: string;
  destination_tag: ColumnType<string | null, number | null, never>;
  block_number: ColumnType<string, number, never>;
  block_hash: string;
  credit: 'credit' | 'below_minimum' | 'unattributed';
  confirmations: number;
  confirmed: boolean;
  /** CONTRACT §6: a reverted deposit keeps its row until the transfer is detected again */
  status: DepositStatus;
  created_at: ColumnType<Date, Date, Date>;
  updated_at: ColumnType<Date, Date, Date>;
}
