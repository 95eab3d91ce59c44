import { EXPORTED_STREAM_CATEGORIES, ownershipOf } from '../audit/ownership.js';
import type { Projection } from './projection.js';

export const AUDIT_STREAMS_PROJECTION = 'audit-streams';

/**
 * Which organization owns each stream, decided once from the stream's first event (revision 0),
 * so the audit export never guesses from metadata (watchers append without `metadata.orgId`).
 * A sweep or a withdrawal's gas top-ups take the organization of the deposit or withdrawal they
 * serve, which global order has always projected before them.
 */
export const auditStreamsProjection: Projection = {
  name: AUDIT_STREAMS_PROJECTION,
  filter: { categories: EXPORTED_STREAM_CATEGORIES },
  tables: ['audit_streams'],
  handle: async (trx, event) => {
    if (event.revision !== 0n) return;
    const ownership = ownershipOf(event);
    if (ownership.kind === 'none') return;
    const orgId =
      ownership.kind === 'org'
        ? ownership.orgId
        : ((await trx.selectFrom('audit_streams').select('org_id').where('stream', '=', ownership.stream).executeTakeFirst())?.org_id ?? null);
    await trx
      .insertInto('audit_streams')
      .values({ stream: event.stream, org_id: orgId, first_position: event.position.toString() })
      .onConflict((oc) => oc.column('stream').doNothing())
      .execute();
  },
};
