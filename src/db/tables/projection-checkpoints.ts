import type { ColumnType } from 'kysely';

/** Where each projection has got to in the global event order (bigint as a decimal string). */
export interface ProjectionCheckpointsTable {
  name: string;
  position: ColumnType<string, string, string>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
  rebuilt_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}
