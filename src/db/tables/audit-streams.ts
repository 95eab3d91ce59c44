import type { ColumnType } from 'kysely';

/** The organization owning each exportable stream (projection `audit-streams`); null: none. */
export interface AuditStreamsTable {
  stream: string;
  org_id: string | null;
  first_position: ColumnType<string, string, string>;
}
