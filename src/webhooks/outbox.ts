import { hash } from 'node:crypto';
import { sql, type RawBuilder, type Transaction } from 'kysely';
import { sessionWrite } from '../db/session-transaction.js';
import type { Database } from '../db/database.js';
import type { WebhookEventType } from './event-types.js';

/** Notified (at commit) whenever a delivery becomes due now: dispatchers wake at once. */
export const WEBHOOK_DUE_CHANNEL = 'webhook_due';

/**
 * CONTRACT §7: while an organization has no webhook URL its deliveries wait, pending and
 * unattempted, with this as their `next_attempt_at` (never due, so no dispatcher scans or attempts
 * them); setting a URL makes them due at once (releaseWaitingDeliveries).
 */
export const WAITING_FOR_URL = 'infinity';

/** `next_attempt_at` of a pending delivery that waits for its organization's webhook URL */
export const waitsForUrl = (nextAttemptAt: Date | number | null): boolean => nextAttemptAt !== null && !(nextAttemptAt instanceof Date && Number.isFinite(nextAttemptAt.getTime()));

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

/**
 * A delivery's id (its `x-webhook-id`, on which receivers dedupe): a UUID of version 7 whose
 * milliseconds are its event's time and whose other bits come from SHA-256 of its dedupe key. So
 * it is written near the end of the outbox's id indexes (events are enqueued about when they
 * happen), and a delivery written again for the same source event (a projection batch a server
 * crash lost, applied again) has the id it had, so a receiver that got the first recognizes it.
 */
export const deliveryIdOf = (dedupeKey: string, timestamp: Date): string => {
  const bytes = hash('sha256', `webhook-delivery:${dedupeKey}`, 'buffer').subarray(0, 16);
  bytes.writeUIntBE(Math.max(0, timestamp.getTime()), 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

/** CONTRACT §7: exactly `{ type, timestamp, payload }`, serialized once; these bytes are signed and sent. */
export const serializeWebhookBody = (type: WebhookEventType, timestamp: Date, payload: Record<string, unknown>): string =>
  JSON.stringify({ type, timestamp: timestamp.toISOString(), payload });

/** Rows per insert statement: the arrays of one statement stay a few megabytes at most. */
const ENQUEUE_CHUNK = 1000;

const checkedBody = (webhook: WebhookToEnqueue): string => {
  const body = serializeWebhookBody(webhook.type, webhook.timestamp, webhook.payload);
  if (Buffer.byteLength(body) > MAX_WEBHOOK_BODY_BYTES) {
    throw new Error(`webhook ${webhook.type} for ${webhook.orgId} is ${Buffer.byteLength(body)} bytes, over ${MAX_WEBHOOK_BODY_BYTES}`);
  }
  if (webhook.dedupeKey.length === 0 || webhook.dedupeKey.length > MAX_DEDUPE_KEY_LENGTH) {
    throw new Error(`a webhook dedupe key has 1 to ${MAX_DEDUPE_KEY_LENGTH} characters`);
  }
  return body;
};

/**
 * Adds deliveries to the outbox, in the order given (their `seq`, the lists' order, follows it).
 * Call it from a projection's batch, with the batch transaction: the deliveries then exist if and
 * only if the read-model change and the checkpoint committed. A dedupe key already present is a
 * no-op (a replay or rebuild re-reads old events; the id derived from it meets the primary key), so
 * this answers how many were added.
 *
 * An organization without a webhook URL gets its deliveries too, waiting (WAITING_FOR_URL) until
 * one is set. Its row is read `for share`: a URL being set meanwhile (releaseWaitingDeliveries,
 * which updates that row) either commits first, and the delivery is due at once, or waits for this
 * transaction, and then releases what it wrote. The rows are locked in one order (by id), so two
 * batches never wait on each other in a circle.
 */
export const enqueueWebhooks = async (trx: Transaction<Database>, webhooks: readonly WebhookToEnqueue[]): Promise<number> => {
  let added = 0;
  for (const statement of enqueueStatements(webhooks)) added += Number((await statement.execute(trx)).rows[0]?.added ?? 0);
  return added;
};

/**
 * enqueueWebhooks for a projection's live batch, which does not read how many were added: the
 * statements are written with `sessionWrite`, so on the runner's session they go out with the
 * batch's commit instead of a round trip each.
 */
export const writeWebhooks = async (trx: Transaction<Database>, webhooks: readonly WebhookToEnqueue[]): Promise<void> => {
  for (const statement of enqueueStatements(webhooks)) await sessionWrite(trx, statement);
};

/**
 * The bodies (each a JSON text) as one JSON array of them, joined as they are: `json_array_elements`
 * on type json gives each element back as the very text it was in the array, so nothing is escaped
 * on the way. As a text[] parameter the driver copied each body escaping every quote of its JSON
 * (the workers' largest allocation per delivery), and PostgreSQL undid that escaping.
 */
const bodiesAsJsonArray = (bodies: readonly string[]): string => `[${bodies.join(',')}]`;

/**
 * One statement per chunk: the rows as arrays (a constant number of parameters), inserted in their
 * order, and one notification if any row was new (delivered to listeners at commit). The event times
 * go as ISO texts in UTC (exact for a timestamptz): a Date the driver would turn into local-time
 * text piece by piece.
 */
const enqueueStatements = (webhooks: readonly WebhookToEnqueue[]): RawBuilder<{ added: string }>[] => {
  const bodies = webhooks.map(checkedBody);
  const statements: RawBuilder<{ added: string }>[] = [];
  for (let start = 0; start < webhooks.length; start += ENQUEUE_CHUNK) {
    const chunk = webhooks.slice(start, start + ENQUEUE_CHUNK);
    statements.push(sql<{ added: string }>`
      with urls as (
        select id, webhook_url is not null as has_url
        from organizations
        where id = any(${[...new Set(chunk.map((webhook) => webhook.orgId))]}::text[])
        order by id
        for share
      ), inserted as (
        insert into webhook_deliveries (id, org_id, event_type, dedupe_key, body, event_timestamp, next_attempt_at)
        select row.id, row.org_id, row.event_type, row.dedupe_key, row.body::text, row.event_timestamp,
               case when urls.has_url then now() else ${WAITING_FOR_URL}::timestamptz end
        from rows from (unnest(${chunk.map((webhook) => deliveryIdOf(webhook.dedupeKey, webhook.timestamp))}::uuid[]), unnest(${chunk.map((webhook) => webhook.orgId)}::text[]),
                        unnest(${chunk.map((webhook) => webhook.type)}::text[]), unnest(${chunk.map((webhook) => webhook.dedupeKey)}::text[]),
                        json_array_elements(${bodiesAsJsonArray(bodies.slice(start, start + ENQUEUE_CHUNK))}::json), unnest(${chunk.map((webhook) => webhook.timestamp.toISOString())}::timestamptz[]))
             with ordinality as row (id, org_id, event_type, dedupe_key, body, event_timestamp, ordinal)
        left join urls on urls.id = row.org_id
        order by ordinal
        on conflict do nothing
        returning 1
      )
      select (select count(*) from inserted) as added, (select pg_notify(${WEBHOOK_DUE_CHANNEL}, '') from inserted limit 1) as notified
    `);
  }
  return statements;
};

/**
 * The organization's webhook URL was set: its waiting deliveries become due now, in their order,
 * and the dispatchers wake. Call it in the transaction that writes the URL to its row (the
 * organizations projection), after that write.
 */
export const releaseWaitingDeliveries = async (trx: Transaction<Database>, orgId: string): Promise<number> => {
  const { rows } = await sql<{ released: string }>`
    with released as (
      update webhook_deliveries
      set next_attempt_at = now(), updated_at = now()
      where org_id = ${orgId} and status = 'pending' and next_attempt_at = ${WAITING_FOR_URL}::timestamptz
      returning 1
    )
    select (select count(*) from released) as released, (select pg_notify(${WEBHOOK_DUE_CHANNEL}, '') from released limit 1) as notified
  `.execute(trx);
  return Number(rows[0]?.released ?? 0);
};

/** One delivery (see enqueueWebhooks); answers whether it was added. */
export const enqueueWebhook = async (trx: Transaction<Database>, webhook: WebhookToEnqueue): Promise<boolean> => (await enqueueWebhooks(trx, [webhook])) > 0;
