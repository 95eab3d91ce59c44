import type { EventFilter, EventStore, EventWithoutMetadata } from '../eventstore/port.js';

/** A fold of the events a shared reader follows (one chain worker's state), handed every batch the reader reads. */
export interface SharedEventsConsumer {
  /** the position its state is folded up to: it skips the events at or before it */
  readonly position: bigint;
  /** folds in the events after its position, then stands at the batch's last position (the next batch waits for it) */
  take(batch: readonly EventWithoutMetadata[]): void | Promise<void>;
}

interface Waiter {
  consumer: SharedEventsConsumer;
  resolve(): void;
  reject(error: unknown): void;
  /** its stop request came: nobody waits for it any more */
  gone: boolean;
}

/**
 * One read of the followed events (a filter of categories and types) for every chain worker of a
 * process that follows them: the deposit watchers, the withdrawal processors. Each worker used to
 * read every chain's events itself and keep only its own chain's (eleven chains: every event read
 * eleven times); the reader reads them once, from the lowest position of its consumers, and hands
 * each batch to all of them in turn, each skipping what it folded already.
 *
 * `readToHead` resolves once a read that began after the call reached the store's head, so the
 * consumer then knows every event appended before the call (a watcher that refreshes before a
 * block is scanned knows every address that block can pay; a processor, every withdrawal ready). Calls made while a read is in flight
 * share the next one. A stop request ends the caller's wait at once; the read itself ends between
 * two batches once nobody waits for it, every consumer standing at the last batch it took.
 * A consumer that throws on a batch fails only its own waiters and takes no more of that read;
 * the others go on (the next read hands it the same events again, from its position).
 */
export class SharedEventsReader {
  /** events read from the store by this reader (every consumer's together) */
  eventsRead = 0;
  private readonly consumers = new Set<SharedEventsConsumer>();
  /**
   * Per consumer, how far the last read it took looked (the port's scannedTo: for a read cut short,
   * the store's head in its snapshot): that read handed it every followed event up to there. A quiet filter's consumer
   * stands at its last followed event, far behind the head while other categories are busy; its next
   * read starts here instead, so it walks only what was appended since (not everything since its
   * last followed event, which the store cannot skip by index when several categories are read).
   */
  private readonly scannedTo = new WeakMap<SharedEventsConsumer, bigint>();
  private next: Waiter[] = [];
  private reading: Promise<void> | null = null;

  constructor(
    private readonly store: EventStore,
    private readonly filter: EventFilter,
    private readonly batchSize = 1000,
  ) {}

  /** the consumer is handed every batch read from now on */
  join(consumer: SharedEventsConsumer): void {
    this.consumers.add(consumer);
  }

  /** how many consumers joined: each takes every batch read */
  get consumerCount(): number {
    return this.consumers.size;
  }

  /** resolves once `consumer` (joined) has taken every followed event appended before the call */
  readToHead(consumer: SharedEventsConsumer, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const stop = () => {
        waiter.gone = true;
        reject(signal!.reason);
      };
      const waiter: Waiter = {
        consumer,
        gone: false,
        resolve: () => {
          signal?.removeEventListener('abort', stop);
          resolve();
        },
        reject: (error) => {
          signal?.removeEventListener('abort', stop);
          reject(error);
        },
      };
      signal?.addEventListener('abort', stop, { once: true });
      this.next.push(waiter);
      this.startRead();
    });
  }

  /** resolves when no read is in flight (after a stop, before the store is closed) */
  async idle(): Promise<void> {
    while (this.reading) await this.reading;
  }

  private startRead(): void {
    if (this.reading || this.next.length === 0) return;
    const waiters = this.next;
    this.next = [];
    this.reading = this.read(waiters)
      .then(
        (failed) => waiters.forEach((waiter) => (failed.has(waiter.consumer) ? waiter.reject(failed.get(waiter.consumer)) : waiter.resolve())),
        (error: unknown) => waiters.forEach((waiter) => waiter.reject(error)),
      )
      .finally(() => {
        this.reading = null;
        this.startRead();
      });
  }

  /**
   * reads to the head, handing each batch to every consumer; answers the consumers that threw and
   * why. Every read began after the waiters called, so the first read cut short (the port's
   * readAllScanned: it has seen the store's head) has handed them every event appended before.
   */
  private async read(waiters: readonly Waiter[]): Promise<Map<SharedEventsConsumer, unknown>> {
    const failed = new Map<SharedEventsConsumer, unknown>();
    for (;;) {
      if (waiters.every((waiter) => waiter.gone)) return failed;
      const taking = [...this.consumers].filter((consumer) => !failed.has(consumer));
      if (taking.length === 0) return failed;
      const afterPosition = taking.map((consumer) => this.readFrom(consumer)).reduce((lowest, position) => (position < lowest ? position : lowest));
      const { events: batch, scannedTo } = await this.store.readAllScanned({ afterPosition, maxCount: this.batchSize, filter: this.filter, metadata: false });
      this.eventsRead += batch.length;
      for (const consumer of taking) {
        try {
          await consumer.take(batch);
        } catch (error) {
          failed.set(consumer, error);
        }
      }
      // the read began at or before each consumer's own start, so it covered each up to scannedTo
      for (const consumer of taking) if (!failed.has(consumer) && scannedTo > this.readFrom(consumer)) this.scannedTo.set(consumer, scannedTo);
      if (batch.length < this.batchSize) return failed;
    }
  }

  /** where `consumer`'s next read starts: after its last followed event, or after where its last read looked to */
  private readFrom(consumer: SharedEventsConsumer): bigint {
    const scanned = this.scannedTo.get(consumer);
    return scanned !== undefined && scanned > consumer.position ? scanned : consumer.position;
  }
}
