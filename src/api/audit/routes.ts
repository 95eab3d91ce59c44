import { createRoute, z } from '@hono/zod-openapi';
import { AUDIT_CATEGORY_NAMES, type AuditCategory } from '../../projections/stream-ownership.js';
import { authenticatedErrors, callerSecurity, errorResponses, timestampSchema } from '../router.js';
import { withdrawalDetailSchema } from '../withdrawals/routes.js';

const position = z.string().regex(/^(0|[1-9][0-9]{0,18})$/, 'a global position: a decimal integer');

export const auditEventsQuerySchema = z
  .object({
    category: z
      .string()
      .refine((value) => value.split(',').every((name) => (AUDIT_CATEGORY_NAMES as string[]).includes(name)), {
        message: `one or more of ${AUDIT_CATEGORY_NAMES.join(', ')}, comma-separated`,
      })
      .transform((value) => [...new Set(value.split(','))] as AuditCategory[])
      .optional()
      .openapi({ description: `default: all. One or more of ${AUDIT_CATEGORY_NAMES.join(', ')}, comma-separated`, example: 'withdrawal,ledger' }),
    from: z.iso.datetime({ offset: true }).optional().openapi({ description: 'events decided at or after this time (metadata.at), ISO 8601', example: '2026-11-01T00:00:00.000Z' }),
    to: z.iso.datetime({ offset: true }).optional().openapi({ description: 'events decided at or before this time (metadata.at), ISO 8601', example: '2026-12-01T00:00:00.000Z' }),
    fromPosition: position.optional().openapi({ description: 'events at or after this global position' }),
    toPosition: position.optional().openapi({ description: 'events at or before this global position' }),
    prevHash: z
      .string()
      .regex(/^[0-9a-f]{64}$/, '64 lowercase hex digits')
      .optional()
      .openapi({ description: 'continue an earlier export: its last line’s hash becomes this export’s first prevHash (default 64 zeros)' }),
    format: z.enum(['ndjson', 'csv']).default('ndjson').openapi({ description: 'NDJSON (default) or CSV (RFC 4180, same columns; data and metadata as JSON text)' }),
  })
  .strict();

const exportDescription = [
  'CONTRACT §9. The organization’s events in global order, streamed. Each line is',
  '`{ position, stream, revision, type, data, metadata, prevHash, hash }`; `hash` = lowercase hex SHA-256 of',
  '`prevHash + "\\n" + JCS(line without hash)` (RFC 8785), the first prevHash being 64 zeros unless `prevHash` is given.',
  'Secrets (API-key digests, password hashes, sealed TOTP seeds and signing secrets) never appear. The export stops at the',
  'position the audit projection has reached when it starts (a few ms behind the head); continue with fromPosition and prevHash.',
].join(' ');

export const auditEventsRoute = createRoute({
  method: 'get',
  path: '/audit/events',
  tags: ['Audit'],
  summary: 'Export the organization’s events with a hash chain (NDJSON or CSV)',
  description: exportDescription,
  security: callerSecurity,
  request: { query: auditEventsQuerySchema },
  responses: {
    200: {
      description: 'The events, one line each (CSV: a header line first)',
      content: {
        'application/x-ndjson': { schema: z.string().openapi({ description: 'one canonical JSON object per line' }) },
        'text/csv': { schema: z.string().openapi({ description: 'position,stream,revision,type,data,metadata,prevHash,hash' }) },
      },
    },
    ...errorResponses(400, ...authenticatedErrors),
  },
});

export const auditHeadRoute = createRoute({
  method: 'get',
  path: '/audit/head',
  tags: ['Audit'],
  summary: 'Where the organization’s export ends now, signed by the audit key',
  description:
    'CONTRACT §9. `{ position, hash, lines, at, signature }`: the last line’s position and hash of a full export from the start (with the same categories), its number of lines, and when; `signature` is base64 Ed25519 over JCS of the other four fields, by the key at GET /audit/public-key. `ledgergate verify <file> --head <head.json>` fails on a file cut short or extended.',
  security: callerSecurity,
  request: { query: z.object({ category: auditEventsQuerySchema.shape.category }).strict() },
  responses: {
    200: {
      description: 'The signed head',
      content: {
        'application/json': {
          schema: z
            .object({ position: z.string(), hash: z.string(), lines: z.number().int(), at: z.string(), signature: z.string() })
            .openapi('AuditHead'),
        },
      },
    },
    ...errorResponses(...authenticatedErrors, 400),
  },
});

export const auditPublicKeyRoute = createRoute({
  method: 'get',
  path: '/audit/public-key',
  tags: ['Audit'],
  summary: 'The audit key’s public key (PEM), to check signed heads',
  security: [],
  responses: { 200: { description: 'An Ed25519 public key, SPKI PEM', content: { 'application/x-pem-file': { schema: z.string() } } } },
});

const historyEntrySchema = z
  .object({
    revision: z.number().int().openapi({ description: 'the event’s revision in the withdrawal’s stream, from 0' }),
    type: z.string().openapi({ example: 'WithdrawalApproved' }),
    data: z.record(z.string(), z.unknown()),
    metadata: z.object({
      actor: z.string().openapi({ description: 'user id, `system`, or a component (`processor:eip155:1`)' }),
      credential: z.enum(['person', 'api-key', 'system']).nullable().openapi({ description: 'how the actor proved who they are; null on events recorded before it was' }),
      username: z.string().nullable().openapi({ description: 'the person’s login name (the key owner’s for an API key); null for the service' }),
      requestId: z.string().nullable(),
      at: timestampSchema,
    }),
    state: withdrawalDetailSchema.openapi({ description: 'the withdrawal as it stood after this event' }),
  })
  .openapi('WithdrawalHistoryEntry');

export const withdrawalHistoryRoute = createRoute({
  method: 'get',
  path: '/withdrawals/{id}/history',
  tags: ['Audit'],
  summary: 'Every event of one withdrawal, with the withdrawal’s state after each (CONTRACT §9)',
  description: '404 WITHDRAWAL_NOT_FOUND for an unknown id or another organization’s withdrawal.',
  security: callerSecurity,
  request: { params: z.object({ id: z.string().min(1).max(100).openapi({ param: { name: 'id', in: 'path' } }) }) },
  responses: {
    200: { description: 'The events in order', content: { 'application/json': { schema: z.object({ events: z.array(historyEntrySchema) }).openapi('WithdrawalHistory') } } },
    ...errorResponses(...authenticatedErrors, 400, 404),
  },
});
