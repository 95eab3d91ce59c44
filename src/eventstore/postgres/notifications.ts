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

  constructor(config: pg.ClientConfig, logger: Logger) {
    this.listener = new ChannelListener(config, APPENDED_CHANNEL, () => this.wakeAll(), logger);
  }

  /** resolves at the next append notification, after `timeoutMs`, or at close */
  async wait(timeoutMs: number): Promise<void> {
    if (this.closed) return;
    this.listener.ensureListening();
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
    for (const wake of [...this.waiters]) wake();
  }
}
