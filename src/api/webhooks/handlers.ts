import type { RouteHandler } from '@hono/zod-openapi';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/database.js';
import { DomainError } from '../../errors.js';
import { listDeliveries, redeliver, type DeliveryRow } from '../../webhooks/deliveries.js';
import type { AppEnv } from '../request-context.js';
import { decodeCursor, encodeCursor } from '../pagination.js';
import type { listDeliveriesRoute, redeliverRoute } from './routes.js';

export interface WebhookRouteDependencies {
  db: Kysely<Database>;
}

const iso = (date: Date | null) => (date === null ? null : date.toISOString());

/** the API shape of a delivery; `payload` is read back from the exact body that is sent */
const toDelivery = (row: DeliveryRow) => ({
  id: row.id,
  type: row.event_type,
  status: row.status,
  attempts: row.attempts,
  nextAttemptAt: iso(row.next_attempt_at),
  lastStatusCode: row.last_status_code,
  lastError: row.last_error,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
  deliveredAt: iso(row.delivered_at),
  payload: (JSON.parse(row.body) as { payload: Record<string, unknown> }).payload,
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const noSuchDelivery = () => new DomainError('NOT_FOUND', 'No such webhook delivery');

export const webhookHandlers = ({ db }: WebhookRouteDependencies) => {
  const list: RouteHandler<typeof listDeliveriesRoute, AppEnv> = async (c) => {
    const { status, limit, cursor } = c.req.valid('query');
    const beforeSeq = cursor === undefined ? undefined : decodeCursor(cursor);
    const { rows, more } = await listDeliveries(db, { orgId: c.get('principal').orgId, status, limit, beforeSeq });
    const last = rows[rows.length - 1];
    const nextCursor = more && last ? encodeCursor(last.seq) : null;
    return c.json({ deliveries: rows.map(toDelivery), nextCursor }, 200);
  };

  const resend: RouteHandler<typeof redeliverRoute, AppEnv> = async (c) => {
    const { id } = c.req.valid('param');
    // an id that is not a UUID names no delivery (and must not reach a uuid column)
    if (!UUID.test(id)) throw noSuchDelivery();
    const row = await redeliver(db, c.get('principal').orgId, id);
    if (!row) throw noSuchDelivery();
    return c.json({ delivery: toDelivery(row) }, 200);
  };

  return { list, resend };
};
