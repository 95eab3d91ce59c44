import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../request-context.js';
import { readinessHandler, type ReadinessCheck } from './handlers.js';
import { readinessRoute } from './routes.js';

export type { ReadinessCheck } from './handlers.js';

/** GET /readyz, without credentials. */
export const readinessRoutes = (check: ReadinessCheck) => new OpenAPIHono<AppEnv>().openapi(readinessRoute, readinessHandler(check));
