import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { serviceUnavailable } from '../errors.js';
import type { AppEnv } from '../request-context.js';

/** Each store answers or not. */
export type HealthCheck = () => Promise<Record<string, boolean>>;

const healthRoute = createRoute({
  method: 'get',
  path: '/healthz',
  summary: 'Liveness and readiness: the event store and the read-model database answer',
  responses: {
    200: { description: 'All stores answer', content: { 'application/json': { schema: z.object({ status: z.literal('ok') }) } } },
    503: { description: 'A store does not answer (SERVICE_UNAVAILABLE, details name which)' },
  },
});

export const healthRoutes = (check: HealthCheck) =>
  new OpenAPIHono<AppEnv>().openapi(healthRoute, async (c) => {
    const checks = await check().catch(() => ({ check: false }));
    if (Object.values(checks).every(Boolean)) return c.json({ status: 'ok' as const }, 200);
    return c.json(serviceUnavailable({ checks }).toBody(), 503) as never;
  });
