import type { RouteHandler } from '@hono/zod-openapi';
import { metricsRegistry } from '../../observability/metrics.js';
import type { AppEnv } from '../request-context.js';
import type { metricsRoute } from './routes.js';

export const metricsHandler: RouteHandler<typeof metricsRoute, AppEnv> = async (c) =>
  c.text(await metricsRegistry.metrics(), 200, { 'content-type': metricsRegistry.contentType });
