import type { Transaction } from 'kysely';
import type { Database } from '../db/database.js';
import type { EventFilter, RecordedEvent } from '../eventstore/port.js';

/**
 * A projection maps events to read-model writes. `handle` runs inside the batch transaction that
 * also moves the checkpoint, so its writes (read-model rows, outbox rows) happen exactly once in
 * effect. It must be deterministic: a rebuild from position 0 must give the same tables.
 */
export interface Projection {
  /** stable: it names the checkpoint row and the advisory lock */
  name: string;
  /** the events it reads (the rest are skipped) */
  filter?: EventFilter;
  /** the tables it owns, emptied on rebuild */
  tables: string[];
  handle(trx: Transaction<Database>, event: RecordedEvent): Promise<void>;
  /**
   * Optional: the same writes as `handle` over each event in order, in a constant number of
   * statements per batch (a round trip per event is what bounds a projection's throughput).
   * Where present, batches go through it; `handle` is then a batch of one.
   */
  handleBatch?(trx: Transaction<Database>, events: RecordedEvent[]): Promise<void>;
}

/** Applies events in order, as one batch when the projection can. */
export const applyEvents = async (trx: Transaction<Database>, projection: Projection, events: RecordedEvent[]): Promise<void> => {
  if (events.length === 0) return;
  if (projection.handleBatch) return projection.handleBatch(trx, events);
  for (const event of events) await projection.handle(trx, event);
};
