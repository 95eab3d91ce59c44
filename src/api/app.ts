import { OpenAPIHono } from '@hono/zod-openapi';
import { DomainError } from '../domain/errors.js';
import type { Logger } from '../log.js';
import { ApiError, internalError, notFound } from './errors.js';
import { healthRoutes, type HealthCheck } from './health/index.js';
import { requestContext, type AppEnv } from './request-context.js';

export interface AppDependencies {
  logger: Logger;
  health: HealthCheck;
}

/** The Hono application: shared middleware, error mapping, and one router per resource. */
export const createApp = ({ logger, health }: AppDependencies) => {
  const app = new OpenAPIHono<AppEnv>();
  app.use('*', requestContext(logger));
  app.route('/', healthRoutes(health));

  app.notFound((c) => c.json(notFound().toBody(), 404));
  app.onError((error, c) => {
    if (error instanceof ApiError) return c.json(error.toBody(), error.status);
    if (error instanceof DomainError) {
      const apiError = ApiError.fromDomain(error);
      return c.json(apiError.toBody(), apiError.status);
    }
    (c.get('logger') ?? logger).error('unhandled error', { error: error.message, stack: error.stack });
    return c.json(internalError().toBody(), 500);
  });
  return app;
};

export type App = ReturnType<typeof createApp>;
