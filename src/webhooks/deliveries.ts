import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database } from '../db/database.js';
import { WEBHOOK_DELIVERY_STATUSES, type WebhookDeliveriesTable, type WebhookDeliveryStatus } from '../db/tables/webhook-deliveries.js';
import { logInterruptedAttempts } from './claims.js';
import { WAITING_FOR_URL, WEBHOOK_DUE_CHANNEL, waitsForUrl } from './outbox.js';

/** Reading and re-sending an organization's deliveries; every query is scoped by `orgId`. */

/** a page, newest first (by insertion order); `beforeSeq` is the `seq` of the previous page's last row */

export type DeliveryRow = Selectable<WebhookDeliveriesTable>;

/**
 * The next attempt's time as shown: none for a delivery waiting for a webhook URL (it is due at no
 * time); while an attempt is in flight, when its lease expires (the next attempt, should this one
 * never report back).
 */
const shownSchedule = (row: DeliveryRow): DeliveryRow => {
  if (waitsForUrl(row.next_attempt_at)) return { ...row, next_attempt_at: null };
  return row.leased_until === null ? row : { ...row, next_attempt_at: row.leased_until };
};

/** One status's page: its entries in `(org_id, status, seq)` newest first, read no further. */
const pageOfStatus = (db: Kysely<Database>, query: { orgId: string; limit: number; beforeSeq?: string }, status: WebhookDeliveryStatus) => {
  let select = db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('org_id', '=', query.orgId)
    .where('status', '=', status)
    .orderBy('seq', 'desc')
    .limit(query.limit + 1);
  if (query.beforeSeq !== undefined) select = select.where('seq', '<', query.beforeSeq);
  return select;
};

/**
 * Without a status, every status's page side by side, merged newest first: the outbox's one list
 * index is `(org_id, status, seq)` (an outcome, which moves `status`, writes no entry into a second).
 */
export const listDeliveries = async (
  db: Kysely<Database>,
  query: { orgId: string; status?: WebhookDeliveryStatus; limit: number; beforeSeq?: string },
): Promise<{ rows: DeliveryRow[]; more: boolean }> => {
  const select = query.status
    ? pageOfStatus(db, query, query.status)
    : db
        .selectFrom((eb) => {
          const [first, ...others] = WEBHOOK_DELIVERY_STATUSES.map((status, index) => eb.selectFrom(pageOfStatus(db, query, status).as(`of_${index}`)).selectAll());
          return others.reduce((union, page) => union.unionAll(page), first!).as('page');
        })
        .selectAll()
        .orderBy('seq', 'desc')
        .limit(query.limit + 1);
  const rows = (await select.execute()).map(shownSchedule);
  return { rows: rows.slice(0, query.limit), more: rows.length > query.limit };
};

/**
 * Starts the delivery's schedule over: pending, no attempts, due now, same id (receivers dedupe on
 * it). An attempt in flight loses its lease, so its outcome no longer changes the delivery (its
 * attempt row is still completed by its sender, if that is alive). Answers null when the
 * organization has no such delivery.
 */
export const redeliver = async (db: Kysely<Database>, orgId: string, id: string): Promise<DeliveryRow | null> =>
  db.transaction().execute(async (trx) => {
    const current = await trx
      .selectFrom('webhook_deliveries')
      .select(['claim_token', 'attempts', 'updated_at'])
      .where('id', '=', id)
      .where('org_id', '=', orgId)
      .forUpdate()
      .executeTakeFirst();
    if (!current) return null;
    if (current.claim_token !== null) {
      const inFlight = sql`select ${current.claim_token}::uuid, ${id}::uuid, ${current.attempts}::integer, ${current.updated_at}::timestamptz`;
      await logInterruptedAttempts(inFlight, 'superseded by a redelivery').execute(trx);
    }
    const row = await trx
      .updateTable('webhook_deliveries')
      .set({
        status: 'pending',
        attempts: 0,
        // due now, or waiting again while the organization has no URL (CONTRACT §7)
        next_attempt_at: sql<Date>`case when exists (select 1 from organizations where id = ${orgId} and webhook_url is not null) then now() else ${WAITING_FOR_URL}::timestamptz end`,
        claim_token: null,
        leased_until: null,
        last_status_code: null,
        last_error: null,
        delivered_at: null,
        updated_at: sql<Date>`now()`,
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await sql`select pg_notify(${WEBHOOK_DUE_CHANNEL}, '')`.execute(trx);
    return shownSchedule(row);
  });
