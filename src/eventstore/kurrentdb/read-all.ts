/**
 * Paged reads of $all with the port's semantics: `afterPosition` exclusive (the client's
 * `fromPosition` is inclusive), system events skipped, exact client-side filtering on top of
 * the narrowing server-side filter, and `maxCount` counted after filtering (default 1000, at most 10,000).
 */
import {
  BACKWARDS,
  END,
  FORWARDS,
  START,
  type AllStreamResolvedEvent,
  type ReadAllOptions as ClientReadAllOptions,
  type ReadPosition,
} from '@kurrent/kurrentdb-client';
import type { ReadAllOptions, RecordedEvent, ScannedRead } from '../port.js';
import {
  isSystemEvent,
  logPositionOf,
  matchesFilter,
  positionOf,
  toReadPosition,
  toRecordedEvent,
  toServerFilter,
} from './mapping.js';

/** One client read of $all, already collected; errors already mapped to port errors. */
export type ReadAllPage = (options: ClientReadAllOptions) => Promise<AllStreamResolvedEvent[]>;

const READ_PAGE_SIZE = 1000;
const HEAD_PAGE_SIZE = 64;
/** Same bounds as the PostgreSQL adapter: a read of $all is a page, never the whole log. */
const DEFAULT_READ_COUNT = 1000;
const MAX_READ_COUNT = 10_000;

export const collect = async <T>(iterable: AsyncIterable<T>): Promise<T[]> => {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
};

/** The continuation point after a page: the full log position of its last event (inclusive next time). */
const nextFrom = (page: AllStreamResolvedEvent[], pageSize: number): ReadPosition | undefined => {
  const last = page.at(-1);
  // The server fills a page up to maxCount unless it reached the end (also for filtered reads).
  return page.length < pageSize || !last ? undefined : logPositionOf(last);
};

/**
 * The read and how far it looked: every page the server answered was walked, so every event the
 * filter takes up to the last position seen (an event the client-side filter dropped included) is
 * in the read. A full read stops at its last event; one cut short has walked to the end of $all as
 * its last page saw it.
 */
export const readAllForwards = async (readPage: ReadAllPage, options: ReadAllOptions): Promise<ScannedRead> => {
  const after = options.afterPosition ?? 0n;
  const limit = Math.min(Math.floor(options.maxCount ?? DEFAULT_READ_COUNT), MAX_READ_COUNT);
  if (limit <= 0) return { events: [], scannedTo: after };
  const accept = matchesFilter(options.filter);
  const filter = toServerFilter(options.filter);
  const events: RecordedEvent[] = [];
  // Everything at or before the cursor was seen (or excluded by afterPosition): skip it.
  let cursor = options.afterPosition ?? -1n;
  let from: ReadPosition | undefined =
    options.afterPosition !== undefined && options.afterPosition > 0n ? toReadPosition(options.afterPosition) : START;
  while (from !== undefined) {
    // +1: the page may start with the event at `from`, which is skipped
    const pageSize = Math.min(READ_PAGE_SIZE, limit - events.length + 1);
    const page = await readPage({ direction: FORWARDS, fromPosition: from, maxCount: pageSize, filter });
    for (const resolved of page) {
      const position = positionOf(resolved);
      if (position === undefined || position <= cursor) continue;
      cursor = position;
      const event = toRecordedEvent(resolved);
      if (!event || !accept(event)) continue;
      events.push(event);
      if (events.length >= limit) return { events, scannedTo: position };
    }
    from = nextFrom(page, pageSize);
  }
  return { events, scannedTo: cursor > after ? cursor : after };
};

/** Position of the newest non-system event, or 0n. */
export const findHeadPosition = async (readPage: ReadAllPage): Promise<bigint> => {
  const filter = toServerFilter(undefined);
  let cursor: bigint | undefined;
  let from: ReadPosition | undefined = END;
  while (from !== undefined) {
    const page = await readPage({ direction: BACKWARDS, fromPosition: from, maxCount: HEAD_PAGE_SIZE, filter });
    for (const resolved of page) {
      const position = positionOf(resolved);
      if (position === undefined || (cursor !== undefined && position >= cursor)) continue;
      cursor = position;
      const event = resolved.event;
      if (event && !resolved.link && !isSystemEvent(event.streamId, event.type)) return position;
    }
    from = nextFrom(page, HEAD_PAGE_SIZE);
  }
  return 0n;
};
