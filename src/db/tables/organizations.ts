import type { ColumnType } from 'kysely';

/** One row per organization (projection `organizations`). The signing secret stays encrypted. */
export interface OrganizationsTable {
  id: string;
  name: string;
  webhook_url: string | null;
  webhook_signing_secret_encrypted: string;
  min_withdrawal_signers: number;
  created_at: ColumnType<Date, Date, Date>;
  updated_at: ColumnType<Date, Date, Date>;
}
