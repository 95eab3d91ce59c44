import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../request-context.js';
import { healthHandler, type HealthCheck } from './handlers.js';
import { healthRoute } from './routes.js';

export type { HealthCheck } from './handlers.js';

/** GET /healthz, without credentials. */
export const healthRoutes = (check: HealthCheck) => new OpenAPIHono<AppEnv>().openapi(healthRoute, healthHandler(check));
