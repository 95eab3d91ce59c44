import type { ColumnType } from 'kysely';

/**
 * Every attempt to send a webhook delivery, for operators. The row is written once, when the
 * attempt ends: by its sender with what happened, or as interrupted when its lease expired first
 * (its dispatcher stopped mid-send) or a redelivery superseded it. `delivery_id` is a delivery of
 * webhook_deliveries, which are never deleted; no foreign key checks it (each check cost an
 * outcome a primary-key descent and a row lock per attempt). Its one index is its primary key,
 * `(delivery_id, id)`: a delivery's attempts, and one row per attempt.
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
