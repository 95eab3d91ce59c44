import type { ColumnType } from 'kysely';

/** An organization's balances of one token (projection `balances`): numeric(78,0) base units, as strings. */
export interface BalancesTable {
  org_id: string;
  token_id: string;
  chain_id: string;
  available: ColumnType<string, string, string>;
  pending: ColumnType<string, string, string>;
  held: ColumnType<string, string, string>;
  updated_at: ColumnType<Date, Date, Date>;
}
