import type { ColumnType, Generated } from 'kysely';

/** One row per organization (projection `organizations`). The signing secret stays encrypted. */
export interface OrganizationsTable {
  id: string;
  name: string;
  webhook_url: string | null;
  webhook_signing_secret_encrypted: string;
  min_withdrawal_signers: number;
  /** CAIP-2 ids of the chains the organization switched off */
  disabled_chain_ids: Generated<string[]>;
  /** CAIP-19 ids of the tokens the organization switched off */
  disabled_token_ids: Generated<string[]>;
  created_at: ColumnType<Date, Date, Date>;
  updated_at: ColumnType<Date, Date, Date>;
}
