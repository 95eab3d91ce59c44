import { createRoute, z } from '@hono/zod-openapi';

export const metricsRoute = createRoute({
  method: 'get',
  path: '/metrics',
  summary: 'Prometheus metrics: requests, projections, webhooks, withdrawals, chains, and the process (restrict it at the proxy)',
  responses: {
    200: {
      description: 'The Prometheus text exposition format',
      content: { 'text/plain': { schema: z.string() } },
    },
  },
});
