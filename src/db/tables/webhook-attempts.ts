import type { ColumnType } from 'kysely';

/**
 * Every attempt to send a webhook delivery, for operators. The row is written when the attempt is
 * claimed (before the request) and completed when it ends; a row left without `finished_at`
 * belongs to a dispatcher that stopped mid-send, and is closed as interrupted when its lease expires.
 */
export interface WebhookAttemptsTable {
  /** also the delivery's `claim_token` while the attempt is in flight */
  id: string;
  delivery_id: string;
  /** 1-based within the delivery's current schedule */
  attempt: number;
  started_at: Date;
  finished_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  status_code: ColumnType<number | null, number | null | undefined, number | null>;
  error: ColumnType<string | null, string | null | undefined, string | null>;
  duration_ms: ColumnType<number | null, number | null | undefined, number | null>;
}
