import { categoryOf, matchesEventFilter, type EventFilter, type EventStore, type EventBody } from '../eventstore/port.js';

/** Events replayed per read while rebuilding (bounded: the rebuild streams, it never loads the store). */
export const REBUILD_BATCH = 5000;

/**
 * Batches a lane of a shared pass may hold, the one it applies included: how far the read runs
 * ahead of its slowest lane (the memory a pass holds is bounded by these batches and the read's).
 */
export const LANE_BATCHES = 4;

/**
 * Replays the events the filter takes after `from`, up to `to` (or the head), through `apply`,
 * reading each batch while the one before it is applied. Answers the position the replay stands at:
 * `to` when given (every event up to it is applied), else the last event applied (`from` if none).
 */
export const replay = async (
  store: Pick<EventStore, 'readAllBodies'>,
  filter: EventFilter | undefined,
  range: { from: bigint; to: bigint | null },
  apply: (batch: EventBody[]) => Promise<void>,
  batchSize = REBUILD_BATCH,
): Promise<bigint> => {
  const read = (afterPosition: bigint) => {
    const reading = store.readAllBodies({ afterPosition, maxCount: batchSize, filter });
    reading.catch(() => undefined); // awaited below; a failure of the batch being applied must not leave it unhandled
    return reading;
  };
  if (range.to !== null && range.to <= range.from) return range.from;
  let position = range.from;
  let next = read(position);
  for (;;) {
    const events = await next;
    const batch = range.to === null ? events : events.filter((event) => event.position <= range.to!);
    const more = events.length === batchSize && batch.length === events.length;
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
export const unionOf = (filters: readonly (EventFilter | undefined)[]): EventFilter => {
  const union = (lists: readonly (readonly string[] | undefined)[]) => (lists.every((list) => list !== undefined) ? [...new Set(lists.flat() as string[])] : undefined);
  const categories = union(filters.map((filter) => filter?.categories));
  const types = union(filters.map((filter) => filter?.types));
  return { ...(categories && { categories }), ...(types && { types }) };
};

/**
 * Readers whose batches are applied one after the other (a session's projections, in one
 * transaction per batch); `apply` gets, for each batch, the events of each of its readers in turn.
 */
export interface PassLane {
  readers: readonly PassReader[];
  apply(eventsOf: EventBody[][]): Promise<void>;
}

/**
 * A lane's batches, applied in order one at a time while the read goes on: `push` queues one and
 * waits only while the lane holds LANE_BATCHES. After a failure the batches queued behind it are
 * skipped; `settled` answers once nothing of what was pushed runs any more, with the failure if any.
 */
class LaneQueue {
  private running: Promise<void> = Promise.resolve();
  private held = 0;
  private onFreed: (() => void) | null = null;
  failed = false;

  async push(work: () => Promise<void>): Promise<void> {
    while (this.held >= LANE_BATCHES) await new Promise<void>((resolve) => (this.onFreed = resolve));
    this.held++;
    const next = this.running.then(work).finally(() => {
      this.held--;
      const freed = this.onFreed;
      this.onFreed = null;
      freed?.();
    });
    // awaited by settled(); a failure is noted here so that nothing waits unobserved
    next.catch(() => (this.failed = true));
    this.running = next;
  }

  settled(): Promise<void> {
    return this.running;
  }
}

/** A batch's events of some categories, in the batch's order (all of them when no category is given). */
interface ByCategory {
  of(categories: readonly string[] | undefined): EventBody[];
}

/**
 * A batch split by category once: every reader of the pass then walks only the events of its own
 * categories, and no event's category is worked out more than once (it was once per reader).
 */
const byCategory = (batch: readonly EventBody[]): ByCategory => {
  const indexes = new Map<string, number[]>();
  batch.forEach((event, index) => {
    const category = categoryOf(event.stream);
    const list = indexes.get(category);
    if (list) list.push(index);
    else indexes.set(category, [index]);
  });
  return {
    of: (categories) => {
      if (!categories) return [...batch];
      const lists = [...new Set(categories)].map((category) => indexes.get(category) ?? []);
      const merged = lists.length === 1 ? lists[0]! : lists.flat().sort((a, b) => a - b);
      return merged.map((index) => batch[index]!);
    },
  };
};

/** The read stopped because a lane failed: that lane's failure is the one to report. */
class PassStoppedError extends Error {}

/**
 * ONE read pass over the store for several lanes of readers: the events any reader takes are read
 * once, in global order and in bounded batches (the next read while a batch is handed out), and each
 * batch is queued to every lane split by reader: `eventsOf[i]` holds, in order, exactly the events
 * of that batch that the lane's reader i takes (its filter, after its `from`, up to its `to`), so
 * over the pass every reader gets exactly its events, in order, once. Each lane applies its batches
 * one after the other at its own pace, up to LANE_BATCHES batches behind the read, so a lane with
 * more work for a batch holds up none of the others. A reader with nothing to take is left out of
 * the read. The first failure is thrown once every lane has settled (nothing may still run on a
 * lane's session when the caller moves on), and no lane starts a batch after it.
 */
export const replayShared = async (store: Pick<EventStore, 'readAllBodies'>, lanes: readonly PassLane[], batchSize = REBUILD_BATCH): Promise<void> => {
  const readers = lanes.flatMap((lane) => lane.readers);
  const open = readers.filter((reader) => reader.to > reader.from);
  if (open.length === 0) return;
  const from = open.reduce((lowest, reader) => (reader.from < lowest ? reader.from : lowest), open[0]!.from);
  const to = open.reduce((highest, reader) => (reader.to > highest ? reader.to : highest), open[0]!.to);
  const takesOf = (reader: PassReader) => {
    const ofType = matchesEventFilter(reader.filter?.types && { types: reader.filter.types });
    return (batch: ByCategory) => batch.of(reader.filter?.categories).filter((event) => event.position > reader.from && event.position <= reader.to && ofType(event));
  };
  const queues = lanes.map((lane) => ({ lane, queue: new LaneQueue(), takes: lane.readers.map(takesOf) }));
  const stopped = () => queues.some(({ queue }) => queue.failed);
  const reading = replay(
    store,
    unionOf(open.map((reader) => reader.filter)),
    { from, to },
    async (batch) => {
      const split = byCategory(batch);
      for (const { lane, queue, takes } of queues) {
        if (stopped()) throw new PassStoppedError();
        const eventsOf = takes.map((take) => take(split));
        if (eventsOf.some((events) => events.length > 0)) await queue.push(() => lane.apply(eventsOf));
      }
    },
    batchSize,
  );
  // the read ends (it stops at a lane's failure), then every lane settles what it was given
  const [read] = await Promise.allSettled([reading]);
  const applied = await Promise.allSettled(queues.map(({ queue }) => queue.settled()));
  for (const each of [...applied, read!]) if (each.status === 'rejected' && !(each.reason instanceof PassStoppedError)) throw each.reason;
};
