import type { Context } from 'hono';
import { matchedRoutes } from 'hono/route';
import { httpRequestDuration, httpRequestsTotal } from '../../observability/metrics.js';

/**
 * The route template that answered (`/withdrawals/:id`), never the raw path, so the label set stays
 * bounded; `unmatched` when no route did (a 404 or 405 from the fallback). Middleware is registered
 * for ALL methods, routes for theirs, so the last route of a method is the handler that ran.
 */
const routeTemplateOf = (c: Context): string => matchedRoutes(c).findLast((route) => route.method !== 'ALL')?.path ?? 'unmatched';

/**
 * Counts an answered request and its time, by method, route template and status (CONTRACT §11).
 * Called by the request's outermost middleware (requestContext) once the answer is final.
 */
export const recordRequestMetrics = (c: Context, seconds: number): void => {
  const route = routeTemplateOf(c);
  httpRequestDuration.observe({ method: c.req.method, route }, seconds);
  httpRequestsTotal.inc({ method: c.req.method, route, status: String(c.res.status) });
};
