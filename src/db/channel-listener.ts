import pg from 'pg';
import type { Logger } from '../log.js';
import { applicationName } from './application-name.js';
import type { PoolTarget } from './pool.js';

/**
 * LISTENs on one channel on its own session and calls `onNotify` for each notification, and once
 * more whenever listening (re)starts, since a notification sent before LISTEN took effect is not
 * replayed. A lost session is reopened at the next `ensureListening()`; meanwhile callers poll.
 * Shared by the event store (new appends) and the webhook dispatcher (new deliveries).
 */
export class ChannelListener {
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly target: PoolTarget,
    private readonly channel: string,
    private readonly onNotify: () => void,
    private readonly logger: Logger,
  ) {}

  ensureListening(): void {
    if (this.client || this.connecting || this.closed) return;
    const client = new pg.Client({ ...this.target, application_name: applicationName(`listen:${this.channel}`) });
    client.on('notification', () => this.onNotify());
    client.on('error', (error) => {
      this.logger.warn('notification session lost; polling until it is back', { channel: this.channel, error });
      if (this.client === client) this.client = null;
      void client.end().catch(() => undefined);
    });
    this.connecting = client
      .connect()
      .then(() => client.query(`listen ${client.escapeIdentifier(this.channel)}`))
      .then(() => {
        if (this.closed) return void client.end().catch(() => undefined);
        this.client = client;
      })
      .catch((error: unknown) => {
        this.logger.warn('cannot listen for notifications; polling', { channel: this.channel, error });
        void client.end().catch(() => undefined);
      })
      .finally(() => {
        this.connecting = null;
        this.onNotify();
      });
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.connecting;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}
