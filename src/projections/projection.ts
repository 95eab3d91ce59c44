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
}
