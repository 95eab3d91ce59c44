import type { ColumnType } from 'kysely';

export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/**
 * The webhook outbox: one row per event to send to one organization (CONTRACT §7). `body` is the
 * exact JSON sent and signed, serialized once at enqueue time. While `pending`, `next_attempt_at`
 * is when the next attempt is (or was) due; during an attempt, `leased_until` is when its lease
 * (`claim_token`) expires.
 * Written by projections (enqueue, inside their batch transaction) and by the dispatcher.
 */
export interface WebhookDeliveriesTable {
  /** the `x-webhook-id` header, stable across retries and redeliveries */
  id: string;
  /** insertion order (bigint as a decimal string): lists run newest first by it */
  seq: ColumnType<string, never, never>;
  org_id: string;
  event_type: string;
  /** source event + type + organization: a replayed projection cannot enqueue twice */
  dedupe_key: string;
  body: string;
  /** the body's `timestamp`, sent as `x-webhook-timestamp` */
  event_timestamp: Date;
  status: ColumnType<WebhookDeliveryStatus, WebhookDeliveryStatus | undefined, WebhookDeliveryStatus>;
  /** attempts started in the current schedule (a redelivery starts a new one at 0) */
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** set while an attempt is in flight; the attempt's id in webhook_attempts */
  claim_token: ColumnType<string | null, string | null | undefined, string | null>;
  /** while an attempt is in flight, when its lease expires: then another dispatcher may take the delivery over (in no index, so a claim is a heap-only update) */
  leased_until: ColumnType<Date | null, Date | null | undefined, Date | null>;
  last_status_code: ColumnType<number | null, number | null | undefined, number | null>;
  last_error: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: ColumnType<Date, Date | undefined, never>;
  updated_at: ColumnType<Date, Date | undefined, Date>;
  delivered_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}
