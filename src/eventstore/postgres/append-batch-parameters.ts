import { categoryOf, type ExpectedRevision, type StreamAppend } from '../port.js';

export const encodeExpected = (expected: ExpectedRevision): string => (typeof expected === 'bigint' ? expected.toString() : expected);

/**
 * The call of `eventstore.append_batch` for a batch of appends (each item one atomic append of one
 * or more streams): typed arrays, one element per append or per event, and the events' data and
 * metadata as two JSON arrays (see the 20261126T1100-append-batch-set-based migration).
 */
export const APPEND_BATCH_SQL =
  'select eventstore.append_batch($1::int[], $2::text[], $3::text[], $4::text[], $5::int[], $6::int[], $7::uuid[], $8::text[], $9::jsonb, $10::jsonb) as result';

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
  return [items, streams, categories, expected, eventCounts, eventAppends, eventIds, types, JSON.stringify(data), JSON.stringify(metadata)];
};
