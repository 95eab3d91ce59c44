import type pg from 'pg';
import { ChannelListener } from '../../db/channel-listener.js';
import type { Logger } from '../../log.js';

export const APPENDED_CHANNEL = 'eventstore_appended';

/**
 * Every append notifies `eventstore_appended` at commit; a subscription waiting for more events
 * wakes on the next notification or after a poll interval (so a lost session or notification delays
 * delivery, never loses an event). One LISTEN session per store, shared by its subscriptions.
 */
export class AppendNotifications {
  private readonly waiters = new Set<() => void>();
  private readonly listener: ChannelListener;
  private closed = false;
  private received = 0;

  constructor(config: pg.ClientConfig, logger: Logger) {
    this.listener = new ChannelListener(config, APPENDED_CHANNEL, () => this.wakeAll(), logger);
  }

  /**
   * How many notifications have arrived: a reader takes it before it reads and hands it to wait()
   * after, so a notification that arrived while it read is not missed.
   */
  get count(): number {
    return this.received;
  }

  /**
   * Resolves at the next append notification, after `timeoutMs`, or at close; at once if a
   * notification arrived since `since` (a `count`).
   */
  async wait(timeoutMs: number, since?: number): Promise<void> {
    if (this.closed) return;
    this.listener.ensureListening();
    if (since !== undefined && since !== this.received) return;
    await new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, timeoutMs);
      this.waiters.add(wake);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wakeAll();
    await this.listener.close();
  }

  private wakeAll() {
    this.received++;
    for (const wake of [...this.waiters]) wake();
  }
}
