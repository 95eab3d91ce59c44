import { createRoute, z, type RouteHandler } from '@hono/zod-openapi';
import { withdrawalHistory } from '../../audit/withdrawal-history.js';
import type { EventStore } from '../../eventstore/port.js';
import type { AppEnv } from '../request-context.js';
import { authenticatedErrors, callerSecurity, createRouter, errorResponses, timestampSchema } from '../router.js';
import { withdrawalDetailSchema } from '../withdrawals/routes.js';

const historyEntrySchema = z
  .object({
    revision: z.number().int().openapi({ description: 'the event’s revision in the withdrawal’s stream, from 0' }),
    type: z.string().openapi({ example: 'WithdrawalApproved' }),
    data: z.record(z.string(), z.unknown()),
    metadata: z.object({
      actor: z.string().openapi({ description: 'user id, `system`, or a component (`processor:eip155:1`)' }),
      credential: z.enum(['person', 'api-key', 'system']).nullable().openapi({ description: 'how the actor proved who they are; null on events recorded before it was' }),
      username: z.string().nullable().openapi({ description: 'the person’s login name (the key owner’s for an API key); null for the service' }),
      requestId: z.string().nullable(),
      at: timestampSchema,
    }),
    state: withdrawalDetailSchema.openapi({ description: 'the withdrawal as it stood after this event' }),
  })
  .openapi('WithdrawalHistoryEntry');

export const withdrawalHistoryRoute = createRoute({
  method: 'get',
  path: '/withdrawals/{id}/history',
  tags: ['Audit'],
  summary: 'Every event of one withdrawal, with the withdrawal’s state after each (CONTRACT §9)',
  description: '404 WITHDRAWAL_NOT_FOUND for an unknown id or another organization’s withdrawal.',
  security: callerSecurity,
  request: { params: z.object({ id: z.string().min(1).max(100).openapi({ param: { name: 'id', in: 'path' } }) }) },
  responses: {
    200: { description: 'The events in order', content: { 'application/json': { schema: z.object({ events: z.array(historyEntrySchema) }).openapi('WithdrawalHistory') } } },
    ...errorResponses(...authenticatedErrors, 400, 404),
  },
});

/** The signed bytes of a transaction are of no use to a tenant before it is sent and none after: the API leaves them out (the audit export keeps every event whole). */
const withoutRawBytes = ({ raw: _raw, ...data }: Record<string, unknown>) => data;

export const withdrawalHistoryRoutes = ({ store }: { store: EventStore }) => {
  const history: RouteHandler<typeof withdrawalHistoryRoute, AppEnv> = async (c) => {
    const events = await withdrawalHistory(store, c.get('principal').orgId, c.req.valid('param').id);
    return c.json({ events: events.map((event) => ({ ...event, data: withoutRawBytes(event.data) })) }, 200);
  };
  return createRouter().openapi(withdrawalHistoryRoute, history);
};
