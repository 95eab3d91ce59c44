import type pg from 'pg';
import { ChannelListener } from '../../db/channel-listener.js';
import type { Logger } from '../../log.js';

export const APPENDED_CHANNEL = 'eventstore_appended';

/** What a reader saw before it waits: the notification count before its read, and the head its read covered. */
export interface ReadSeen {
  /** `count` taken before the read */
  count: number;
  /**
   * every position up to this one was covered by the read (the store's head in the read's
   * snapshot, when it came back empty); absent: unknown
   */
  scannedTo?: bigint;
}

interface Waiter {
  scannedTo: bigint | undefined;
  wake: () => void;
}

/**
 * Every append notifies `eventstore_appended` at commit, with the last position it wrote as the
 * payload; a subscription waiting for more events wakes on a notification naming a position its
 * last read did not cover, after a poll interval, or at close (so a lost session or notification
 * delays delivery, never loses an event). Positions are committed in order (invariant 6), so a read
 * whose snapshot's head was `h` has seen every event up to `h`: a notification of an append at or
 * below it (one that committed before the read, or in a category the reader skips) needs no read.
 * A notification without a position (listening started again) wakes everyone. One LISTEN session
 * per store, shared by its subscriptions.
 */
export class AppendNotifications {
  private readonly waiters = new Set<Waiter>();
  private readonly listener: ChannelListener;
  private closed = false;
  private received = 0;
  /** the count at the last notification that named no position */
  private lastUnnamed = 0;
  /** the highest position a notification named */
  private highestNamed = -1n;

  constructor(config: pg.ClientConfig, logger: Logger) {
    this.listener = new ChannelListener(config, APPENDED_CHANNEL, (payload) => this.notified(payload), logger);
  }

  /**
   * How many notifications have arrived: a reader takes it before it reads and hands it to wait()
   * after, so a notification that arrived while it read is not missed.
   */
  get count(): number {
    return this.received;
  }

  /**
   * Resolves at the next append notification that may bring events the read did not see, after
   * `timeoutMs`, or at close; at once if one arrived since `seen.count`. Without `seen.scannedTo`
   * every notification may.
   */
  async wait(timeoutMs: number, seen?: number | ReadSeen): Promise<void> {
    if (this.closed) return;
    this.listener.ensureListening();
    const { count, scannedTo } = typeof seen === 'number' ? { count: seen, scannedTo: undefined } : (seen ?? { count: undefined, scannedTo: undefined });
    if (count !== undefined && count !== this.received && (scannedTo === undefined || this.lastUnnamed > count)) return;
    if (scannedTo !== undefined && this.highestNamed > scannedTo) return;
    await new Promise<void>((resolve) => {
      const waiter: Waiter = {
        scannedTo,
        wake: () => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve();
        },
      };
      const timer = setTimeout(waiter.wake, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.notified();
    await this.listener.close();
  }

  private notified(payload?: string) {
    this.received++;
    const named = payload !== undefined && /^\d+$/.test(payload) ? BigInt(payload) : null;
    if (named === null) this.lastUnnamed = this.received;
    else if (named > this.highestNamed) this.highestNamed = named;
    for (const waiter of [...this.waiters]) {
      if (named === null || waiter.scannedTo === undefined || named > waiter.scannedTo) waiter.wake();
    }
  }
}
