import type { ColumnType, Generated } from 'kysely';

/** Deposit accounts (projection `accounts`), one per organization, chain and user. */
export interface AccountsTable {
  /** insertion order, for newest-first pages */
  seq: Generated<string>;
  org_deposit_account_id: string;
  org_id: string;
  chain_id: string;
  external_user_id: string;
  address: string;
  destination_tag: string | null;
  created_at: ColumnType<Date, Date, Date>;
  updated_at: ColumnType<Date, Date, Date>;
}
