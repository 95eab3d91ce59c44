import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { metricsRegistry, startDefaultMetrics } from '../../observability/metrics.js';
import type { AppEnv } from '../request-context.js';

const metricsRoute = createRoute({
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

/** GET /metrics, without credentials like /healthz (CONTRACT §11): the operator restricts it at the proxy. */
export const metricsRoutes = () => {
  startDefaultMetrics();
  return new OpenAPIHono<AppEnv>().openapi(metricsRoute, async (c) =>
    c.text(await metricsRegistry.metrics(), 200, { 'content-type': metricsRegistry.contentType }),
  );
};
