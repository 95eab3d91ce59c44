import { sql, type Transaction } from 'kysely';
import { sessionWrite } from '../db/session-transaction.js';
import { EXPORTED_STREAM_CATEGORIES, ownershipOf } from './stream-ownership.js';
import type { Database } from '../db/database.js';
import type { EventBody } from '../eventstore/port.js';
import { unnestRows } from '../db/unnest-rows.js';
import type { Projection } from './projection.js';

export const AUDIT_STREAMS_PROJECTION = 'audit-streams';

/** An audit stream's row as the batch sends it: `same_as` names the stream whose organization it takes. */
interface FirstOfStream {
  stream: string;
  /** its organization; for a `same_as` row, what the batch decided for that stream (used when it has no row yet) */
  org_id: string | null;
  same_as: string | null;
  first_position: string;
}

/**
 * One insert per batch, nothing read first. A plain insert: each stream's first event (revision 0)
 * is projected once, since a batch commits with its checkpoint and a rebuild fills fresh tables, so
 * a row already there would be a broken exactly-once, which fails the batch rather than pass
 * unseen; and `on conflict do nothing` cost every row a speculative insertion (the arbiter index
 * probed first, one more write-ahead log record to confirm the row).
 * A stream that takes another's organization (a sweep its deposit's, gas top-ups their
 * withdrawal's) takes it from that stream's row when it has one, else from what the batch decided
 * for it earlier (the streams referred to name their organization themselves), else none.
 */
const handleBatch = async (trx: Transaction<Database>, batch: EventBody[]): Promise<void> => {
  const decided = new Map<string, string | null>();
  const rows: FirstOfStream[] = [];
  for (const event of batch) {
    if (event.revision !== 0n) continue;
    const ownership = ownershipOf(event);
    if (ownership.kind === 'none' || decided.has(event.stream)) continue;
    const sameAs = ownership.kind === 'sameAs' ? ownership.stream : null;
    const orgId = ownership.kind === 'org' ? ownership.orgId : (decided.get(ownership.stream) ?? null);
    decided.set(event.stream, orgId);
    rows.push({ stream: event.stream, org_id: orgId, same_as: sameAs, first_position: event.position.toString() });
  }
  if (rows.length === 0) return;
  await sessionWrite(
    trx,
    sql`
      insert into audit_streams (stream, org_id, first_position)
      select row.stream,
             case when row.same_as is not null and exists (select from audit_streams stored where stored.stream = row.same_as)
                  then (select stored.org_id from audit_streams stored where stored.stream = row.same_as)
                  else row.org_id end,
             row.first_position
      from ${unnestRows(rows, [
        ['stream', 'text'],
        ['org_id', 'text'],
        ['same_as', 'text'],
        ['first_position', 'bigint'],
      ], 'row')}
    `,
  );
};

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
  handle: (trx, event) => handleBatch(trx, [event]),
  handleBatch,
};
