import type { Kysely } from 'kysely';
import type { Database } from '../db/database.js';
import type { EventStore, RecordedEvent } from '../eventstore/port.js';
import { readCheckpoint } from '../projections/checkpoint.js';
import { AUDIT_STREAMS_PROJECTION } from '../projections/audit-streams.js';
import { CSV_HEADER, exportLine, GENESIS_HASH, toCsv, toNdjson, type ExportLine } from './export-line.js';
import { AUDIT_CATEGORY_NAMES, streamCategoriesOf, type AuditCategory } from '../projections/stream-ownership.js';

export type ExportFormat = 'ndjson' | 'csv';

export interface ExportOptions {
  orgId: string;
  /** default: every category */
  categories?: readonly AuditCategory[];
  /** inclusive bounds on the event's decision time (`metadata.at`) */
  from?: Date;
  to?: Date;
  /** inclusive bounds on the global position */
  fromPosition?: bigint;
  toPosition?: bigint;
  /** the last hash of an earlier export this one continues; default 64 zeros */
  prevHash?: string;
  /** events read per round trip: memory is bounded by it, whatever the export's length */
  batchSize?: number;
}

export interface ExportDependencies {
  store: EventStore;
  db: Kysely<Database>;
}

const DEFAULT_BATCH_SIZE = 1000;

const ownersOf = async (db: Kysely<Database>, batch: RecordedEvent[]): Promise<Map<string, string | null>> => {
  const names = [...new Set(batch.map((event) => event.stream))];
  const rows = await db.selectFrom('audit_streams').select(['stream', 'org_id']).where('stream', 'in', names).execute();
  return new Map(rows.map((row) => [row.stream, row.org_id]));
};

const withinTime = (event: RecordedEvent, from: number, to: number) => {
  if (from === -Infinity && to === Infinity) return true;
  const at = Date.parse(event.metadata.at);
  return at >= from && at <= to;
};

/**
 * An organization's events in global order, each chained to the previous line's hash. It stops at
 * the position the `audit-streams` projection has reached when the export starts: below it every
 * stream's organization is known, so nothing of the organization's is left out (a later export
 * continues with `fromPosition` = last position + 1 and `prevHash` = last hash). Reads bounded
 * batches through the event-store port (PostgreSQL or KurrentDB alike): constant memory.
 */
export async function* exportLines({ store, db }: ExportDependencies, options: ExportOptions): AsyncGenerator<ExportLine[]> {
  const checkpoint = await readCheckpoint(db, AUDIT_STREAMS_PROJECTION);
  const last = options.toPosition !== undefined && options.toPosition < checkpoint ? options.toPosition : checkpoint;
  const filter = { categories: streamCategoriesOf(options.categories ?? AUDIT_CATEGORY_NAMES) };
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const from = options.from?.getTime() ?? -Infinity;
  const to = options.to?.getTime() ?? Infinity;
  let prevHash = options.prevHash ?? GENESIS_HASH;
  let after = options.fromPosition !== undefined && options.fromPosition > 0n ? options.fromPosition - 1n : 0n;
  while (after < last) {
    const batch = (await store.readAll({ afterPosition: after, maxCount: batchSize, filter })).filter((event) => event.position <= last);
    if (batch.length === 0) return;
    after = batch[batch.length - 1]!.position;
    const owners = await ownersOf(db, batch);
    const lines: ExportLine[] = [];
    for (const event of batch) {
      if (owners.get(event.stream) !== options.orgId || !withinTime(event, from, to)) continue;
      const line = exportLine(event, prevHash);
      prevHash = line.hash;
      lines.push(line);
    }
    if (lines.length > 0) yield lines;
  }
}

/**
 * The export as bytes, pulled: the next batch is read only when the consumer asks for more, so a
 * slow client holds back the database reads instead of filling memory.
 */
export const exportStream = (dependencies: ExportDependencies, options: ExportOptions, format: ExportFormat): ReadableStream<Uint8Array> => {
  const encoder = new TextEncoder();
  const batches = exportLines(dependencies, options);
  const render = format === 'csv' ? toCsv : toNdjson;
  let headerSent = format !== 'csv';
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (!headerSent) {
          headerSent = true;
          controller.enqueue(encoder.encode(CSV_HEADER));
          return;
        }
        const next = await batches.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(next.value.map(render).join('')));
      },
      async cancel() {
        await batches.return(undefined);
      },
    },
    { highWaterMark: 1 },
  );
};

/**
 * Waits (up to `timeoutMs`) until the `audit-streams` projection has applied every exportable event
 * appended before the call, so an export right after a write includes it. Gives up quietly: the
 * export then ends at the checkpoint, as documented.
 */
export const awaitAuditStreams = async ({ store, db }: ExportDependencies, timeoutMs: number): Promise<void> => {
  const head = await store.headPosition();
  const deadline = Date.now() + timeoutMs;
  const filter = { categories: streamCategoriesOf(AUDIT_CATEGORY_NAMES) };
  for (let delayMs = 2; ; delayMs = Math.min(delayMs * 2, 100)) {
    const checkpoint = await readCheckpoint(db, AUDIT_STREAMS_PROJECTION);
    if (checkpoint >= head) return;
    const [pending] = await store.readAll({ afterPosition: checkpoint, maxCount: 1, filter });
    if (!pending || pending.position > head || Date.now() > deadline) return;
    await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
};
