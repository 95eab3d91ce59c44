import type { ColumnType } from 'kysely';

/** An organization's users, who are its signers (projection `organizations`). No credentials here. */
export interface UsersTable {
  id: string;
  org_id: string;
  username: string;
  created_at: ColumnType<Date, Date, Date>;
}
