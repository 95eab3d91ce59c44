import DataLoader from 'dataloader';
import type { EventStore } from '../eventstore/port.js';

/** how many streams one read asks for at most */
const MAX_STREAMS_PER_READ = 1000;

const readers = new WeakMap<Pick<EventStore, 'streamRevisions'>, DataLoader<string, bigint | null>>();

/**
 * A stream's revision in the store now (null: no events), read after this call. The revisions
 * asked in one turn of the event loop go to the store together, as one multi-stream read: a ledger
 * batch starts every decision's reads in one turn (ledger-batches.ts), so the reference claims and
 * organization revisions of a whole batch cost one query. Nothing is kept between reads
 * (DataLoader's cache is off): every answer is the store's at a moment after its ask.
 */
export const currentRevision = (store: Pick<EventStore, 'streamRevisions'>, stream: string): Promise<bigint | null> => {
  let reader = readers.get(store);
  if (!reader) {
    reader = new DataLoader<string, bigint | null>((streams) => store.streamRevisions(streams), { cache: false, maxBatchSize: MAX_STREAMS_PER_READ });
    readers.set(store, reader);
  }
  return reader.load(stream);
};
