import { createRoute, z } from '@hono/zod-openapi';

export const readinessRoute = createRoute({
  method: 'get',
  path: '/readyz',
  summary: 'Readiness: migrations ran and every projection caught up with the event store as it was when this process started',
  responses: {
    200: { description: 'Ready for traffic', content: { 'application/json': { schema: z.object({ status: z.literal('ready') }) } } },
    503: { description: 'Not ready yet (SERVICE_UNAVAILABLE, details.waitingFor names what it waits for)' },
  },
});
