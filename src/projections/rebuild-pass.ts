import { matchesEventFilter, type EventFilter, type EventStore, type RecordedEvent } from '../eventstore/port.js';

/** Events replayed per read while rebuilding (bounded: the rebuild streams, it never loads the store). */
export const REBUILD_BATCH = 5000;

/**
 * Replays the events the filter takes after `from`, up to `to` (or the head), through `apply`,
 * reading each batch while the one before it is applied. Answers the position the replay stands at:
 * `to` when given (every event up to it is applied), else the last event applied (`from` if none).
 */
export const replay = async (
  store: Pick<EventStore, 'readAll'>,
  filter: EventFilter | undefined,
  range: { from: bigint; to: bigint | null },
  apply: (batch: RecordedEvent[]) => Promise<void>,
): Promise<bigint> => {
  const read = (afterPosition: bigint) => {
    const reading = store.readAll({ afterPosition, maxCount: REBUILD_BATCH, filter });
    reading.catch(() => undefined); // awaited below; a failure of the batch being applied must not leave it unhandled
    return reading;
  };
  if (range.to !== null && range.to <= range.from) return range.from;
  let position = range.from;
  let next = read(position);
  for (;;) {
    const events = await next;
    const batch = range.to === null ? events : events.filter((event) => event.position <= range.to!);
    const more = events.length === REBUILD_BATCH && batch.length === events.length;
    if (more) next = read(batch[batch.length - 1]!.position);
    if (batch.length > 0) {
      await apply(batch);
      position = batch[batch.length - 1]!.position;
    }
    if (!more) return range.to ?? position;
  }
};

/** What one reader of a shared pass takes: the events its filter takes after `from`, up to `to`. */
export interface PassReader {
  filter?: EventFilter;
  from: bigint;
  to: bigint;
}

/**
 * A filter that takes every event any of these take (and perhaps more: each reader's own filter
 * then picks its events). A list left out by one filter is left out of the union.
 */
const unionOf = (filters: readonly (EventFilter | undefined)[]): EventFilter => {
  const union = (lists: readonly (readonly string[] | undefined)[]) => (lists.every((list) => list !== undefined) ? [...new Set(lists.flat() as string[])] : undefined);
  const categories = union(filters.map((filter) => filter?.categories));
  const types = union(filters.map((filter) => filter?.types));
  return { ...(categories && { categories }), ...(types && { types }) };
};

/**
 * ONE read pass over the store for several readers: the events any of them takes are read once, in
 * global order and in bounded batches (the next read while a batch is applied), and each batch is
 * handed to `apply` split by reader: `eventsOf[i]` holds, in order, exactly the events of that batch
 * that reader i takes (its filter, after its `from`, up to its `to`), so over the pass every reader
 * gets exactly its events, in order, once. A reader with nothing to take is left out of the read.
 */
export const replayShared = async (
  store: Pick<EventStore, 'readAll'>,
  readers: readonly PassReader[],
  apply: (eventsOf: RecordedEvent[][]) => Promise<void>,
): Promise<void> => {
  const open = readers.filter((reader) => reader.to > reader.from);
  if (open.length === 0) return;
  const from = open.reduce((lowest, reader) => (reader.from < lowest ? reader.from : lowest), open[0]!.from);
  const to = open.reduce((highest, reader) => (reader.to > highest ? reader.to : highest), open[0]!.to);
  const takes = readers.map((reader) => {
    const matches = matchesEventFilter(reader.filter);
    return (event: RecordedEvent) => event.position > reader.from && event.position <= reader.to && matches(event);
  });
  await replay(store, unionOf(open.map((reader) => reader.filter)), { from, to }, async (batch) => {
    const eventsOf = readers.map((): RecordedEvent[] => []);
    for (const event of batch) {
      for (let index = 0; index < takes.length; index++) if (takes[index]!(event)) eventsOf[index]!.push(event);
    }
    await apply(eventsOf);
  });
};
