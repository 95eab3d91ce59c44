import pg from 'pg';
import type { Logger } from '../../log.js';
import { applicationName } from '../../db/application-name.js';

/**
 * One LISTEN connection per store, shared by all of its subscriptions. Every append notifies
 * `eventstore_appended` at commit; a waiter wakes on the next notification or after a poll
 * interval (so a lost connection or notification delays delivery, never loses an event).
 */
export class AppendNotifications {
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private waiters = new Set<() => void>();
  private closed = false;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly logger: Logger,
  ) {}

  /** resolves at the next append notification, after `timeoutMs`, or at close */
  async wait(timeoutMs: number): Promise<void> {
    if (this.closed) return;
    this.ensureListening();
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
    for (const wake of [...this.waiters]) wake();
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private wakeAll() {
    for (const wake of [...this.waiters]) wake();
  }

  private ensureListening() {
    if (this.client || this.connecting || this.closed) return;
    const client = new pg.Client({ ...this.config, application_name: applicationName('listen') });
    client.on('notification', () => this.wakeAll());
    client.on('error', (error) => {
      this.logger.warn('eventstore: notification connection lost', { error });
      if (this.client === client) this.client = null;
      void client.end().catch(() => undefined);
    });
    this.connecting = client
      .connect()
      .then(() => client.query('listen eventstore_appended'))
      .then(() => {
        if (this.closed) return void client.end().catch(() => undefined);
        this.client = client;
      })
      .catch((error: unknown) => {
        this.logger.warn('eventstore: cannot listen for appends; polling', { error });
        void client.end().catch(() => undefined);
      })
      .finally(() => {
        this.connecting = null;
        this.wakeAll(); // read once more: an append may have landed before LISTEN took effect
      });
  }
}
