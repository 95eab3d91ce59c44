import { randomUUID } from 'node:crypto';
import { sql, type Transaction } from 'kysely';
import type { Database } from '../db/database.js';
import type { WebhookEventType } from './event-types.js';

/** Notified (at commit) whenever a delivery becomes due now: dispatchers wake at once. */
export const WEBHOOK_DUE_CHANNEL = 'webhook_due';

/** The largest body the outbox accepts (also a check constraint): far above any event payload. */
export const MAX_WEBHOOK_BODY_BYTES = 256 * 1024;
const MAX_DEDUPE_KEY_LENGTH = 512;

export interface WebhookToEnqueue {
  orgId: string;
  type: WebhookEventType;
  /** the event object; amounts are already decimal strings (a bigint here is a bug and throws) */
  payload: Record<string, unknown>;
  /** the event's time, the body's `timestamp` and the `x-webhook-timestamp` header */
  timestamp: Date;
  /** unique per (source event, type, organization); see webhookDedupeKey */
  dedupeKey: string;
}

/** The dedupe key of the webhook a projection sends for one source event. */
export const webhookDedupeKey = (orgId: string, type: WebhookEventType, sourceEventId: string): string => `${orgId}:${type}:${sourceEventId}`;

/** CONTRACT §7: exactly `{ type, timestamp, payload }`, serialized once; these bytes are signed and sent. */
export const serializeWebhookBody = (type: WebhookEventType, timestamp: Date, payload: Record<string, unknown>): string =>
  JSON.stringify({ type, timestamp: timestamp.toISOString(), payload });

/**
 * Adds a delivery to the outbox. Call it from a projection's `handle`, with the batch transaction:
 * the delivery then exists if and only if the read-model change and the checkpoint committed.
 * A dedupe key already present is a no-op (a replay or rebuild re-reads old events), so this
 * answers whether a delivery was added.
 *
 * An organization without a webhook URL still gets the delivery: the URL is read at send time,
 * so one configured soon after still receives it (see dispatcher.ts).
 */
export const enqueueWebhook = async (trx: Transaction<Database>, webhook: WebhookToEnqueue): Promise<boolean> => {
  const body = serializeWebhookBody(webhook.type, webhook.timestamp, webhook.payload);
  if (Buffer.byteLength(body) > MAX_WEBHOOK_BODY_BYTES) {
    throw new Error(`webhook ${webhook.type} for ${webhook.orgId} is ${Buffer.byteLength(body)} bytes, over ${MAX_WEBHOOK_BODY_BYTES}`);
  }
  if (webhook.dedupeKey.length === 0 || webhook.dedupeKey.length > MAX_DEDUPE_KEY_LENGTH) {
    throw new Error(`a webhook dedupe key has 1 to ${MAX_DEDUPE_KEY_LENGTH} characters`);
  }
  // one round trip: insert, and notify only if a row was inserted (delivered to listeners at commit)
  const inserted = await trx
    .with('inserted', (db) =>
      db
        .insertInto('webhook_deliveries')
        .values({
          id: randomUUID(),
          org_id: webhook.orgId,
          event_type: webhook.type,
          dedupe_key: webhook.dedupeKey,
          body,
          event_timestamp: webhook.timestamp,
          next_attempt_at: sql<Date>`now()`,
        })
        .onConflict((conflict) => conflict.column('dedupe_key').doNothing())
        .returning('id'),
    )
    .selectFrom('inserted')
    .select(sql<string>`pg_notify(${WEBHOOK_DUE_CHANNEL}, '')`.as('notified'))
    .execute();
  return inserted.length > 0;
};
