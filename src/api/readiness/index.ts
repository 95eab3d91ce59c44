import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import { serviceUnavailable } from '../errors.js';
import type { AppEnv } from '../request-context.js';

/** Whether this process may take traffic yet, and if not, what it still waits for. */
export type ReadinessCheck = () => Promise<{ ready: boolean; waitingFor: string[] }>;

const readinessRoute = createRoute({
  method: 'get',
  path: '/readyz',
  summary: 'Readiness: migrations ran and every projection caught up with the event store as it was when this process started',
  responses: {
    200: { description: 'Ready for traffic', content: { 'application/json': { schema: z.object({ status: z.literal('ready') }) } } },
    503: { description: 'Not ready yet (SERVICE_UNAVAILABLE, details.waitingFor names what it waits for)' },
  },
});

export const readinessRoutes = (check: ReadinessCheck) =>
  new OpenAPIHono<AppEnv>().openapi(readinessRoute, async (c) => {
    const readiness = await check().catch(() => ({ ready: false, waitingFor: ['readiness check'] }));
    if (readiness.ready) return c.json({ status: 'ready' as const }, 200);
    return c.json(serviceUnavailable({ waitingFor: readiness.waitingFor }).toBody(), 503) as never;
  });
