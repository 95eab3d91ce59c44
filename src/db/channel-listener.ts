import pg from 'pg';
import type { Logger } from '../log.js';
import { applicationName } from './application-name.js';
import type { PoolTarget } from './pool.js';

/** What a listener whose callers keep state in memory must hear besides notifications. */
export interface SessionEvents {
  /** LISTEN took effect (first time or after a lost session): from here on no notification is missed */
  listening?: () => void;
  /** the session is gone: notifications sent from now until `listening` are never delivered */
  lost?: () => void;
}

/**
 * LISTENs on one channel on its own session and calls `onNotify` for each notification (with its
 * payload), and once more, with none, whenever listening (re)starts, since a notification sent
 * before LISTEN took effect is not replayed. A lost session is reopened at the next `ensureListening()`; meanwhile callers poll.
 * Shared by the event store (new appends, and the caches that follow them) and the webhook
 * dispatcher (new deliveries).
 */
export class ChannelListener {
  private client: pg.Client | null = null;
  private connecting: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly target: PoolTarget,
    private readonly channel: string,
    private readonly onNotify: (payload?: string) => void,
    private readonly logger: Logger,
    private readonly session: SessionEvents = {},
  ) {}

  /** true while LISTEN is in effect on a live session */
  get listening(): boolean {
    return this.client !== null;
  }

  ensureListening(): void {
    if (this.client || this.connecting || this.closed) return;
    const client = new pg.Client({ ...this.target, application_name: applicationName(`listen:${this.channel}`) });
    client.on('notification', (message) => this.onNotify(message.payload));
    const lose = (error?: unknown) => {
      const wasListening = this.client === client;
      if (wasListening) this.client = null;
      void client.end().catch(() => undefined);
      if (!wasListening) return;
      if (!this.closed) this.logger.warn('notification session lost; polling until it is back', { channel: this.channel, error });
      this.session.lost?.();
    };
    client.on('error', (error) => lose(error));
    client.on('end', () => lose());
    this.connecting = client
      .connect()
      .then(() => client.query(`listen ${client.escapeIdentifier(this.channel)}`))
      .then(() => {
        if (this.closed) return void client.end().catch(() => undefined);
        this.client = client;
        this.session.listening?.();
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
    if (client) this.session.lost?.();
    await client?.end().catch(() => undefined);
  }
}
