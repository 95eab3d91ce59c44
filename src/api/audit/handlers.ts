import type { RouteHandler } from '@hono/zod-openapi';
import { awaitAuditStreams, exportStream, type ExportDependencies } from '../../audit/export.js';
import { auditHead } from '../../audit/head.js';
import { withdrawalHistory } from '../../audit/withdrawal-history.js';
import type { EventStore } from '../../eventstore/port.js';
import type { Keyring } from '../../security/keyring.js';
import type { AppEnv } from '../request-context.js';
import type { auditEventsRoute, auditHeadRoute, auditPublicKeyRoute, withdrawalHistoryRoute } from './routes.js';

const AUDIT_PROJECTION_WAIT_MS = 2000;
const CONTENT_TYPES = { ndjson: 'application/x-ndjson; charset=utf-8', csv: 'text/csv; charset=utf-8' } as const;

export type AuditDependencies = ExportDependencies & { keyring: Keyring; clock: () => Date };

/** The caller's organization's events, never another's (the principal decides). */
export const auditHandlers = (dependencies: AuditDependencies) => {
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

  return { exportEvents, head };
};

/** No credentials: anyone checking a head needs it. */
export const auditPublicKeyHandler =
  (keyring: Keyring): RouteHandler<typeof auditPublicKeyRoute, AppEnv> =>
  (c) =>
    c.body(keyring.audit.publicKeyPem, 200, { 'content-type': 'application/x-pem-file' });

/** The signed bytes of a transaction are of no use to a tenant before it is sent and none after: the API leaves them out (the audit export keeps every event whole). */
const withoutRawBytes = ({ raw: _raw, ...data }: Record<string, unknown>) => data;

export const withdrawalHistoryHandler =
  ({ store }: { store: EventStore }): RouteHandler<typeof withdrawalHistoryRoute, AppEnv> =>
  async (c) => {
    const events = await withdrawalHistory(store, c.get('principal').orgId, c.req.valid('param').id);
    return c.json({ events: events.map((event) => ({ ...event, data: withoutRawBytes(event.data) })) }, 200);
  };
