import type { RouteHandler } from '@hono/zod-openapi';
import { awaitAuditStreams, exportStream, type ExportDependencies } from '../../audit/export.js';
import type { AppEnv } from '../request-context.js';
import { createRouter } from '../router.js';
import { auditEventsRoute, auditHeadRoute, auditPublicKeyRoute } from './routes.js';
import { auditHead } from '../../audit/head.js';
import type { Keyring } from '../../security/keyring.js';

const AUDIT_PROJECTION_WAIT_MS = 2000;
const CONTENT_TYPES = { ndjson: 'application/x-ndjson; charset=utf-8', csv: 'text/csv; charset=utf-8' } as const;

/** GET /audit/events: the caller's organization's events, never another's (the principal decides). */
export const auditRoutes = (dependencies: ExportDependencies & { keyring: Keyring; clock: () => Date }) => {
  const exportEvents: RouteHandler<typeof auditEventsRoute, AppEnv> = async (c) => {
    const query = c.req.valid('query');
    // the caller's own writes of a moment ago are in the export (the projection lags by milliseconds)
    await awaitAuditStreams(dependencies, AUDIT_PROJECTION_WAIT_MS);
    const body = exportStream(
      dependencies,
      {
        orgId: c.get('principal').orgId,
        categories: query.category,
        from: query.from === undefined ? undefined : new Date(query.from),
        to: query.to === undefined ? undefined : new Date(query.to),
        fromPosition: query.fromPosition === undefined ? undefined : BigInt(query.fromPosition),
        toPosition: query.toPosition === undefined ? undefined : BigInt(query.toPosition),
        prevHash: query.prevHash,
      },
      query.format,
    );
    return new Response(body, {
      status: 200,
      headers: { 'content-type': CONTENT_TYPES[query.format], 'content-disposition': `attachment; filename="audit-events.${query.format}"`, 'cache-control': 'no-store' },
    });
  };
  const head: RouteHandler<typeof auditHeadRoute, AppEnv> = async (c) => {
    await awaitAuditStreams(dependencies, AUDIT_PROJECTION_WAIT_MS);
    const categories = c.req.valid('query').category;
    return c.json(await auditHead(dependencies, { orgId: c.get('principal').orgId, ...(categories ? { categories } : {}) }, dependencies.keyring.audit.privateKey, dependencies.clock()), 200);
  };
  return createRouter().openapi(auditEventsRoute, exportEvents).openapi(auditHeadRoute, head);
};

/** GET /audit/public-key, no credentials: anyone checking a head needs it. Mounted before /audit/* is protected. */
export const auditPublicKeyRoutes = (keyring: Keyring) =>
  createRouter().openapi(auditPublicKeyRoute, (c) => c.body(keyring.audit.publicKeyPem, 200, { 'content-type': 'application/x-pem-file' }));
