import { categoryOf, checkedRevision, type ExpectedRevision, type StreamAppend } from '../port.js';

export const encodeExpected = (expected: ExpectedRevision): string => (typeof expected === 'bigint' ? expected.toString() : expected);

/**
 * The call of `eventstore.append_batch_checks` for a batch of appends (each item one atomic
 * append of one or more streams, an append of no events a check of its stream's revision): typed
 * arrays, one element per append or per event, and the events' data and metadata as two JSON arrays
 * (see the 20261126T1700-append-batch-positions and 20261127T0900-append-batch-checks migrations).
 */
export const APPEND_BATCH_SQL =
  'select positions, revisions, refusals from eventstore.append_batch_checks($1::int[], $2::text[], $3::text[], $4::text[], $5::int[], $6::int[], $7::uuid[], $8::text[], $9::jsonb, $10::jsonb)';

/** What `eventstore.append_batch_checks` answers: each written event's position and revision in batch order, and the refused items. */
export interface AppendBatchRow {
  positions: string[];
  revisions: string[];
  refusals: Record<string, RefusedAppend>;
}

export type RefusedAppend =
  | { error: 'wrong_expected_revision'; stream: string; expected: string; actual: string }
  | { error: 'duplicate_event_id'; eventId: string };

/** One item's answer: where its last event landed and each of its streams' new revision, or why it was refused. */
export type BatchOutcome = { position: string; streams: { stream: string; revision: string }[] } | RefusedAppend;

/**
 * Each item's answer from the batch's written events: an accepted item's events are the next ones in
 * batch order, its position its last event's, each stream's revision that of its last event there
 * (a checked stream's: the revision it was checked at).
 */
export const batchOutcomes = (batch: StreamAppend[][], row: AppendBatchRow): BatchOutcome[] => {
  let written = 0;
  const outcomes = batch.map((appends, item): BatchOutcome => {
    const refusal = row.refusals[String(item)];
    if (refusal) return refusal;
    const streams = appends.map(({ stream, expectedRevision, events }) => {
      if (events.length === 0) return { stream, revision: checkedRevision(expectedRevision).toString() };
      written += events.length;
      return { stream, revision: row.revisions[written - 1]! };
    });
    return { position: row.positions[written - 1]!, streams };
  });
  if (written !== row.positions.length || written !== row.revisions.length) {
    throw new Error(`append_batch_checks answered ${row.positions.length} written events where the accepted appends have ${written}`);
  }
  return outcomes;
};

/**
 * A PostgreSQL array literal of integers (`{0,1,2}`): nothing in one needs quoting, so it is
 * joined at once instead of node-postgres escaping each element as it does any array.
 */
const integerArrayLiteral = (values: readonly number[]): string => `{${values.join(',')}}`;

/**
 * A PostgreSQL array literal of strings, `{"a","b"}`, made by one JSON.stringify when no element
 * needs an escape (no backslash in the JSON: no quote, backslash or control character in any
 * element; stream names, categories, ids and types never have one), where the same text is a
 * quoted array literal of the same strings. Otherwise the array itself, which node-postgres
 * escapes element by element (it does so with two replaces and a concatenation per element).
 */
const textArrayLiteral = (values: readonly string[]): string | readonly string[] => {
  const json = JSON.stringify(values);
  return json.includes('\\') ? values : `{${json.slice(1, -1)}}`;
};

export const appendBatchParameters = (batch: StreamAppend[][]): unknown[] => {
  const items: number[] = [];
  const streams: string[] = [];
  const categories: string[] = [];
  const expected: string[] = [];
  const eventCounts: number[] = [];
  const eventAppends: number[] = [];
  const eventIds: string[] = [];
  const types: string[] = [];
  const data: unknown[] = [];
  const metadata: unknown[] = [];
  batch.forEach((appends, item) => {
    for (const append of appends) {
      items.push(item);
      streams.push(append.stream);
      categories.push(categoryOf(append.stream));
      expected.push(encodeExpected(append.expectedRevision));
      eventCounts.push(append.events.length);
      for (const event of append.events) {
        eventAppends.push(streams.length);
        eventIds.push(event.id);
        types.push(event.type);
        data.push(event.data);
        metadata.push(event.metadata);
      }
    }
  });
  return [
    integerArrayLiteral(items),
    textArrayLiteral(streams),
    textArrayLiteral(categories),
    textArrayLiteral(expected),
    integerArrayLiteral(eventCounts),
    integerArrayLiteral(eventAppends),
    textArrayLiteral(eventIds),
    textArrayLiteral(types),
    JSON.stringify(data),
    JSON.stringify(metadata),
  ];
};
