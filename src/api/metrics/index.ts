import { OpenAPIHono } from '@hono/zod-openapi';
import { startDefaultMetrics } from '../../observability/metrics.js';
import type { AppEnv } from '../request-context.js';
import { metricsHandler } from './handlers.js';
import { metricsRoute } from './routes.js';

/** GET /metrics, without credentials like /healthz (CONTRACT §11): the operator restricts it at the proxy. */
export const metricsRoutes = () => {
  startDefaultMetrics();
  return new OpenAPIHono<AppEnv>().openapi(metricsRoute, metricsHandler);
};
