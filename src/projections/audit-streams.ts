import { sql, type Transaction } from 'kysely';
import { sessionWrite } from '../db/session-transaction.js';
import { EXPORTED_STREAM_CATEGORIES, ownershipOf, type Ownership } from './stream-ownership.js';
import type { Database } from '../db/database.js';
import type { EventBody } from '../eventstore/port.js';
import { insertRows } from '../db/unnest-rows.js';
import type { Projection, RebuildMemory } from './projection.js';

export const AUDIT_STREAMS_PROJECTION = 'audit-streams';

/** Streams and the organization each belongs to (null: none), as their rows hold them. */
type KnownStreams = Map<string, string | null>;

/** The rows of the streams these first events start or refer to (those without one are left out). */
const readKnown = async (trx: Transaction<Database>, owned: readonly { event: EventBody; ownership: Ownership }[]): Promise<KnownStreams> => {
  const referred = owned.flatMap(({ event, ownership }) => (ownership.kind === 'sameAs' ? [event.stream, ownership.stream] : [event.stream]));
  const rows = await trx.selectFrom('audit_streams').select(['stream', 'org_id']).where('stream', '=', sql<string>`any(${[...new Set(referred)]}::text[])`).execute();
  return new Map(rows.map((row) => [row.stream, row.org_id]));
};

/**
 * One read and one insert per batch. The read covers the streams the batch's first events refer to
 * (a sweep's deposit, gas top-ups' withdrawal) and those first events' own streams (a row already
 * there is kept, as before); streams decided earlier in the batch are known from memory. A rebuild
 * reads nothing: it remembers every row it wrote to its own copy of the table (which starts empty),
 * so it knows every row there.
 */
const handleBatch = async (trx: Transaction<Database>, batch: EventBody[], _outbox?: unknown, memory?: RebuildMemory): Promise<void> => {
  const written = memory?.of('streams', (): KnownStreams => new Map());
  const firsts = batch.filter((event) => event.revision === 0n).map((event) => ({ event, ownership: ownershipOf(event) }));
  const owned = firsts.filter(({ ownership }) => ownership.kind !== 'none');
  if (owned.length === 0) return;
  const known = written ?? (await readKnown(trx, owned));
  const inserts: { stream: string; org_id: string | null; first_position: string }[] = [];
  for (const { event, ownership } of owned) {
    if (known.has(event.stream)) continue;
    const orgId = ownership.kind === 'org' ? ownership.orgId : ownership.kind === 'sameAs' ? (known.get(ownership.stream) ?? null) : null;
    known.set(event.stream, orgId);
    inserts.push({ stream: event.stream, org_id: orgId, first_position: event.position.toString() });
  }
  if (inserts.length === 0) return;
  await sessionWrite(
    trx,
    sql`${insertRows('audit_streams', inserts, [
    ['stream', 'text'],
    ['org_id', 'text'],
    ['first_position', 'bigint'],
  ])} on conflict (stream) do nothing`,
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
