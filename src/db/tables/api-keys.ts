import type { ColumnType } from 'kysely';

/**
 * API keys by key id, with a keyed digest of the key (never the key). A rotated-away key keeps its
 * row with `revoked_at` set, so it answers INVALID_API_KEY rather than looking unknown.
 */
export interface ApiKeysTable {
  key_id: string;
  org_id: string;
  user_id: string;
  key_digest: string;
  created_at: ColumnType<Date, Date, Date>;
  revoked_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}
