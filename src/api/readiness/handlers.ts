import type { RouteHandler } from '@hono/zod-openapi';
import { serviceUnavailable } from '../errors.js';
import type { AppEnv } from '../request-context.js';
import type { readinessRoute } from './routes.js';

/** Whether this process may take traffic yet, and if not, what it still waits for. */
export type ReadinessCheck = () => Promise<{ ready: boolean; waitingFor: string[] }>;

export const readinessHandler =
  (check: ReadinessCheck): RouteHandler<typeof readinessRoute, AppEnv> =>
  async (c) => {
    const readiness = await check().catch(() => ({ ready: false, waitingFor: ['readiness check'] }));
    if (readiness.ready) return c.json({ status: 'ready' as const }, 200);
    return c.json(serviceUnavailable({ waitingFor: readiness.waitingFor }).toBody(), 503) as never;
  };
