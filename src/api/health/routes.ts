import { createRoute, z } from '@hono/zod-openapi';

export const healthRoute = createRoute({
  method: 'get',
  path: '/healthz',
  summary: 'Liveness and readiness: the event store and the read-model database answer',
  responses: {
    200: { description: 'All stores answer', content: { 'application/json': { schema: z.object({ status: z.literal('ok') }) } } },
    503: { description: 'A store does not answer (SERVICE_UNAVAILABLE, details name which)' },
  },
});
