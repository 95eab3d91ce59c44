import { streamCategories } from '../../domain/streams.js';
import type { EventStore } from '../../eventstore/port.js';
import { SharedEventsReader, type SharedEventsConsumer } from '../shared-events-reader.js';

/** what the watchers follow: deposit accounts, deposits, and the derivation indexes of the organizations' own wallets */
export const FOLLOWED_CATEGORIES = [streamCategories.account, streamCategories.deposit, streamCategories.derivationOwner];

/** A fold of the followed events (one chain's watcher state), handed every batch the reader reads. */
export type FollowedEventsConsumer = SharedEventsConsumer;

/** One read of the followed categories for every watcher of a process (../shared-events-reader.ts). */
export class FollowedEventsReader extends SharedEventsReader {
  constructor(store: EventStore) {
    super(store, { categories: FOLLOWED_CATEGORIES });
  }
}
