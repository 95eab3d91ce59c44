import type { Transaction } from 'kysely';
import type { Database } from '../db/database.js';
import type { EventFilter, EventBody } from '../eventstore/port.js';
import { BoundedMap } from '../lib/bounded-map.js';
import { releaseWaitingDeliveries, writeWebhooks, type WebhookToEnqueue } from '../webhooks/outbox.js';

/**
 * What a projection does to the webhook outbox besides its own tables. Applying events live, these
 * are the outbox's own functions. A rebuild replaying events the live projection already applied
 * passes `alreadyApplied`: their deliveries exist (written with the checkpoint that covered them,
 * and never deleted), so writing them again would only be turned away by their dedupe keys, and
 * the projection does not even build them (`sends` is false).
 */
export interface OutboxEffects {
  /** false when the events' deliveries exist already: a projection need not even build them */
  readonly sends: boolean;
  enqueue(trx: Transaction<Database>, webhooks: readonly WebhookToEnqueue[]): Promise<unknown>;
  /** an organization's webhook URL was set: what waited for it is due now */
  releaseWaiting(trx: Transaction<Database>, orgId: string): Promise<unknown>;
}

/** the live outbox: its inserts are writes (`sessionWrite`), sent with the batch's commit on the runner's session */
export const liveOutbox: OutboxEffects = { sends: true, enqueue: writeWebhooks, releaseWaiting: releaseWaitingDeliveries };

export const alreadyApplied: OutboxEffects = { sends: false, enqueue: async () => 0, releaseWaiting: async () => 0 };

/**
 * A projection maps events to read-model writes. `handle` runs inside the batch transaction that
 * also moves the checkpoint, so its writes (read-model rows, outbox rows) happen exactly once in
 * effect. It must be deterministic: a rebuild from position 0 must give the same tables. Its outbox
 * writes go through `outbox` (live unless said otherwise). Writes whose answer it does not read go
 * through `sessionWrite`: on the runner's session they are held back and sent with the batch's
 * commit (a read sends those held before it first, so the order stays the handler's).
 */
export interface Projection {
  /** stable: it names the checkpoint row and the advisory lock */
  name: string;
  /** the events it reads (the rest are skipped) */
  filter?: EventFilter;
  /** the tables it owns, rebuilt side by side and swapped in by a rebuild */
  tables: string[];
  handle(trx: Transaction<Database>, event: EventBody, outbox?: OutboxEffects): Promise<void>;
  /**
   * Optional: the same writes as `handle` over each event in order, in a constant number of
   * statements per batch (a round trip per event is what bounds a projection's throughput).
   * Where present, batches go through it; `handle` is then a batch of one.
   */
  handleBatch?(trx: Transaction<Database>, events: EventBody[], outbox?: OutboxEffects, memory?: BatchMemory): Promise<void>;
}

/** the entries a projection keeps under one name at most (the least recently used go first; a miss reads the table) */
export const REMEMBERED_ENTRIES = 10_000;
/**
 * the same for a live runner, which shares its process with the service's other work: the events
 * that follow a withdrawal's request come within seconds (2,000 is about two seconds of the
 * heaviest load measured) or after the processor's backlog, where 10,000 would miss as well
 */
export const LIVE_REMEMBERED_ENTRIES = 2_000;

/**
 * What a projection keeps from one batch to the next on ONE session that alone writes its tables:
 * a rebuild's (its own copies of the tables, which start empty and which nothing else writes), or
 * a live runner's while it stays active (it holds the projection's lock, and every batch finds the
 * checkpoint where the last one left it, else it fails: a rebuild that swaps tables in resets the
 * checkpoint). The projection may remember what it wrote there instead of reading it back; it must
 * write exactly what it would have written reading it. A memory ends with the first batch that
 * fails (a rebuild is abandoned, its copies dropped; a live runner follows again from its
 * checkpoint with a new memory), so nothing remembered outlives a rollback.
 */
export class BatchMemory {
  private readonly kept = new Map<string, BoundedMap<string, unknown>>();

  constructor(private readonly limit = REMEMBERED_ENTRIES) {}

  /** what the projection keeps under `name`: at most `limit` entries, empty at first */
  entries<T>(name: string): BoundedMap<string, T> {
    let entries = this.kept.get(name);
    if (!entries) this.kept.set(name, (entries = new BoundedMap<string, unknown>(this.limit)));
    return entries as BoundedMap<string, T>;
  }
}

/** Applies events in order, as one batch when the projection can (with the session's memory, if it keeps one). */
export const applyEvents = async (
  trx: Transaction<Database>,
  projection: Projection,
  events: EventBody[],
  outbox: OutboxEffects = liveOutbox,
  memory?: BatchMemory,
): Promise<void> => {
  if (events.length === 0) return;
  if (projection.handleBatch) return projection.handleBatch(trx, events, outbox, memory);
  for (const event of events) await projection.handle(trx, event, outbox);
};
