import DataLoader from 'dataloader';
import { Coalescer } from '../db/coalescer.js';
import type { EventStore } from '../eventstore/port.js';

/** how many streams one turn's ask holds at most, and how many turns' asks one read carries */
const MAX_STREAMS_PER_ASK = 250;
const MAX_ASKS_PER_READ = 32;

type RevisionStore = Pick<EventStore, 'streamRevisions'>;

const readers = new WeakMap<RevisionStore, DataLoader<string, bigint | null>>();

/** one read for several asks: each stream asked once, each ask answered in its own order */
const readTogether = (store: RevisionStore) => async (asks: (readonly string[])[]): Promise<(bigint | null)[][]> => {
  const streams = [...new Set(asks.flat())];
  const revisions = await store.streamRevisions(streams);
  const byStream = new Map(streams.map((stream, index) => [stream, revisions[index] ?? null]));
  return asks.map((ask) => ask.map((stream) => byStream.get(stream) ?? null));
};

/**
 * A stream's revision in the store now (null: no events), read after this call. The revisions
 * asked in one turn of the event loop go to the store together, as one multi-stream read: a ledger
 * batch starts every decision's reads in one turn (ledger-batches.ts), so the reference claims and
 * organization revisions of a whole batch cost one query. While a read is in flight, what the
 * other ledgers' batches ask waits and goes out together in the next one (group commit, for
 * reads): with many tokens, one read serves the batches of many ledgers instead of one read per
 * batch. Nothing is kept between reads (DataLoader's cache is off), and an ask made while a read is
 * in flight waits for the next: every answer is the store's at a moment after its ask.
 */
export const currentRevision = (store: RevisionStore, stream: string): Promise<bigint | null> => {
  let reader = readers.get(store);
  if (!reader) {
    const reads = new Coalescer(readTogether(store), { maxBatch: MAX_ASKS_PER_READ, gatherAfterAnswer: true });
    reader = new DataLoader<string, bigint | null>((streams) => reads.add(streams), { cache: false, maxBatchSize: MAX_STREAMS_PER_ASK });
    readers.set(store, reader);
  }
  return reader.load(stream);
};
