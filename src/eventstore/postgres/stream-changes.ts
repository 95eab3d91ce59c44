import type pg from 'pg';
import { ChannelListener } from '../../db/channel-listener.js';
import type { Logger } from '../../log.js';
import { categoryOf, type StreamChangeListener, type StreamChanges } from '../port.js';
import { APPENDED_CHANNEL } from './notifications.js';

/** how many changed streams one catch-up read takes at most (it reads on until it has them all) */
const READ_LIMIT = 1000;

interface Follower {
  categories: Set<string>;
  listener: StreamChangeListener;
}

export interface StreamChangeReads {
  /** the position of the newest event (0 when none) */
  head(): Promise<bigint>;
  /** streams of these categories appended after `position`, with their positions, in position order */
  changedAfter(position: bigint, categories: string[], limit: number): Promise<{ stream: string; position: bigint }[]>;
}

/**
 * Follows the event store's appends on a LISTEN session of its own (`eventstore_appended`, sent at
 * each commit with the last position): at each notification it reads which streams of the followed
 * categories were appended since the position it last saw (positions are committed in increasing
 * order, so reading `position > seen` never skips one) and tells the followers.
 *
 * It vouches for nothing it might have missed: until LISTEN is in effect and the head position read
 * after it, `following()` is false; a lost session, a failed read or a restart resets every follower
 * (they drop all they keep) and following starts again from a fresh head. Appends of this process
 * are told synchronously by the store (`appended`), before the append's caller sees its answer.
 */
export class StreamChangeFeed implements StreamChanges {
  private readonly followers = new Set<Follower>();
  private readonly listener: ChannelListener;
  private seen = 0n;
  private live = false;
  /** bumped at every reset: a restart or catch-up begun before it must not declare the feed live */
  private epoch = 0;
  private starting = false;
  private reading: Promise<void> | null = null;
  private readAgain = false;
  private closed = false;

  constructor(
    config: pg.ClientConfig,
    private readonly reads: StreamChangeReads,
    logger: Logger,
  ) {
    this.listener = new ChannelListener(config, APPENDED_CHANNEL, () => this.notified(), logger, {
      listening: () => this.start(),
      lost: () => this.resetAll(),
    });
  }

  following(): boolean {
    if (this.followers.size === 0 || this.closed) return false;
    this.listener.ensureListening();
    if (!this.live && this.listener.listening && !this.starting) this.start();
    return this.live;
  }

  follow(categories: string[], listener: StreamChangeListener): () => void {
    const follower = { categories: new Set(categories), listener };
    this.followers.add(follower);
    this.listener.ensureListening();
    return () => this.followers.delete(follower);
  }

  /** an append of this process settled (written or not: a failed one may have been written) */
  appended(streams: readonly string[]): void {
    for (const stream of streams) this.tell(stream);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.resetAll();
    await this.listener.close();
    await this.reading;
  }

  private tell(stream: string) {
    const category = categoryOf(stream);
    for (const { categories, listener } of this.followers) if (categories.has(category)) listener.changed(stream);
  }

  private resetAll() {
    this.live = false;
    this.epoch++;
    for (const { listener } of this.followers) listener.reset();
  }

  /** LISTEN is in effect: everything committed from here on is notified; what came before is read as the head */
  private start() {
    this.resetAll();
    const epoch = this.epoch;
    this.starting = true;
    this.reads
      .head()
      .then((head) => {
        if (epoch !== this.epoch || !this.listener.listening) return;
        this.seen = head;
        // what a follower loaded before this moment may predate the head: drop it once more
        this.resetAll();
        this.live = true;
        // a notification that came while the head was read was not acted on: read once from the head
        this.notified();
      })
      .catch(() => undefined)
      .finally(() => {
        this.starting = false;
      });
  }

  private notified() {
    if (!this.live) return;
    if (this.reading) {
      this.readAgain = true;
      return;
    }
    this.reading = this.readChanges().finally(() => {
      this.reading = null;
      if (this.readAgain) {
        this.readAgain = false;
        this.notified();
      }
    });
  }

  private async readChanges(): Promise<void> {
    const epoch = this.epoch;
    const categories = [...new Set([...this.followers].flatMap(({ categories }) => [...categories]))];
    try {
      for (;;) {
        const changes = await this.reads.changedAfter(this.seen, categories, READ_LIMIT);
        if (epoch !== this.epoch) return;
        for (const { stream, position } of changes) {
          this.tell(stream);
          this.seen = position;
        }
        if (changes.length < READ_LIMIT) return;
      }
    } catch {
      // cannot tell what changed: nothing kept may be trusted until following starts again
      if (epoch === this.epoch) this.resetAll();
    }
  }
}
