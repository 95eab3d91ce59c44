import type { ColumnType } from 'kysely';

/** Deposit accounts (projection `accounts`), one per organization, chain and user. */
export interface AccountsTable {
  /** the AccountCreated event's global position: newest-first pages, the same on every rebuild */
  seq: string;
  org_deposit_account_id: string;
  org_id: string;
  chain_id: string;
  external_user_id: string;
  address: string;
  destination_tag: string | null;
  created_at: ColumnType<Date, Date, Date>;
  updated_at: ColumnType<Date, Date, Date>;
}
