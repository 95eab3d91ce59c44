import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import { httpRequestDuration, httpRequestsTotal } from '../../observability/metrics.js';

/**
 * The route template that answered (`/withdrawals/:id`), never the raw path, so the label set stays
 * bounded; `unmatched` when no route did (a 404 or 405 from the fallback). Middleware is registered
 * for ALL methods, routes for theirs, so the last route of a method is the handler that ran.
 */
const routeTemplateOf = (c: Context): string => matchedRoutes(c).findLast((route) => route.method !== 'ALL')?.path ?? 'unmatched';

/** Counts every request and times it, by method, route template and status (CONTRACT §11). */
export const recordRequestMetrics = (): MiddlewareHandler => async (c, next) => {
  const stopTimer = httpRequestDuration.startTimer();
  try {
    await next();
  } finally {
    const route = routeTemplateOf(c);
    stopTimer({ method: c.req.method, route });
    httpRequestsTotal.inc({ method: c.req.method, route, status: String(c.res.status) });
  }
};
