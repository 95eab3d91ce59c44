import { createRoute, z } from '@hono/zod-openapi';
import { pageQuery } from '../pagination.js';
import { authenticatedErrors, callerSecurity, errorResponses, timestampSchema } from '../router.js';
import { WEBHOOK_DELIVERY_STATUSES } from '../../db/tables/webhook-deliveries.js';


export const deliverySchema = z
  .object({
    id: z.string().openapi({ description: 'the x-webhook-id header, stable across retries and redeliveries' }),
    type: z.string().openapi({ example: 'deposit.detected' }),
    status: z.enum(WEBHOOK_DELIVERY_STATUSES),
    attempts: z.number().int().openapi({ description: 'attempts made in the current schedule (a redelivery starts again at 0)' }),
    nextAttemptAt: timestampSchema.nullable().openapi({ description: 'while pending: when the next attempt is due; null while it waits for the organization to set a webhook URL' }),
    lastStatusCode: z.number().int().nullable(),
    lastError: z.string().nullable(),
    createdAt: timestampSchema,
    updatedAt: timestampSchema,
    deliveredAt: timestampSchema.nullable(),
    payload: z.record(z.string(), z.unknown()).openapi({ description: 'the event object, as sent in the body' }),
  })
  .openapi('WebhookDelivery');


export const listDeliveriesRoute = createRoute({
  method: 'get',
  path: '/webhooks/deliveries',
  tags: ['Webhooks'],
  summary: 'The organization’s webhook deliveries, newest first',
  security: callerSecurity,
  request: {
    query: z.object({
      status: z.enum(WEBHOOK_DELIVERY_STATUSES).optional(),
      ...pageQuery,
    }),
  },
  responses: {
    200: {
      description: 'A page of deliveries; nextCursor is null on the last page',
      content: {
        'application/json': {
          schema: z.object({ deliveries: z.array(deliverySchema), nextCursor: z.string().nullable() }).openapi('WebhookDeliveryPage'),
        },
      },
    },
    ...errorResponses(...authenticatedErrors, 400),
  },
});

export const redeliverRoute = createRoute({
  method: 'post',
  path: '/webhooks/deliveries/{id}/redeliver',
  tags: ['Webhooks'],
  summary: 'Send a delivery again: pending, due now, a fresh retry schedule, the same id',
  security: callerSecurity,
  request: { params: z.object({ id: z.string().max(100).openapi({ param: { name: 'id', in: 'path' } }) }) },
  responses: {
    200: {
      description: 'The delivery, pending again',
      content: { 'application/json': { schema: z.object({ delivery: deliverySchema }).openapi('WebhookRedelivery') } },
    },
    ...errorResponses(...authenticatedErrors, 400, 404),
  },
});
