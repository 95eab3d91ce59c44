import type { RouteHandler } from '@hono/zod-openapi';
import { serviceUnavailable } from '../errors.js';
import type { AppEnv } from '../request-context.js';
import type { healthRoute } from './routes.js';

/** Each store answers or not. */
export type HealthCheck = () => Promise<Record<string, boolean>>;

export const healthHandler =
  (check: HealthCheck): RouteHandler<typeof healthRoute, AppEnv> =>
  async (c) => {
    const checks = await check().catch(() => ({ check: false }));
    if (Object.values(checks).every(Boolean)) return c.json({ status: 'ok' as const }, 200);
    return c.json(serviceUnavailable({ checks }).toBody(), 503) as never;
  };
