import { matchesEventFilter, type EventFilter, type EventStore, type EventWithoutMetadata, type Subscription } from '../eventstore/port.js';
import { unionOf } from './rebuild-pass.js';

/** A follower's batches, and the events handed to it that its next batch would bring. */
export interface FollowedEvents extends Subscription<EventWithoutMetadata> {
  /**
   * Takes, at most `maxCount`, the events already handed that follow the last batch (none while it
   * still has events to read on its own first): a runner whose next batch was ready before it
   * finished the last one applies what came meanwhile with it, in one transaction instead of two.
   */
  takeQueued(maxCount: number): EventWithoutMetadata[];
}

export interface FollowOptions {
  /** its checkpoint: it is handed the events its filter takes after this */
  afterPosition: bigint;
  filter?: EventFilter;
  maxBatchSize: number;
}

/** One read of the store, subscribed for every follower at the head, handed to each in turn. */
interface Feed {
  subscription: Subscription<EventWithoutMetadata>;
  /** the last position it handed out (or started after): it has no more events its filter takes up to there */
  handedTo: bigint;
}

interface Follower {
  readonly filter: EventFilter | undefined;
  readonly takes: (event: EventWithoutMetadata) => boolean;
  readonly maxBatchSize: number;
  /** every event it takes up to here has been delivered, is in `queue` or (below `gap.to`) is still to read on its own */
  handedTo: bigint;
  /** events the feed handed it, in order, waiting for its next batch */
  queue: EventWithoutMetadata[];
  /** the feed it is handed events by; null: it reads on its own */
  feed: Feed | null;
  /** joined a feed that had read past it: the events it takes in (from, to] it reads on its own first */
  gap: { from: bigint; to: bigint } | null;
  closed: boolean;
  /** ends a wait for the feed */
  wake: () => void;
}

/**
 * One read of the event store for every projection runner of a process. Each runner used to
 * subscribe on its own, so every append woke all of them and each read the store (about 8.6 reads
 * an append for eight projections); now one subscription, to every category any of them takes,
 * reads what follows and hands each follower the events its filter takes, which it applies and
 * checkpoints in its own transaction as before. Nothing here is durable: a follower starts from its
 * checkpoint, so a crash between two projections' batches loses nothing and applies nothing twice.
 *
 * A follower reads on its own until a read of its own comes back cut short (it has seen the
 * store's head): a projection catching up on a long history does not drag the shared read back.
 * Then it joins the shared read (reading on its own first whatever the shared read passed while it
 * caught up). The shared read never waits for a follower: a follower that falls behind (more than
 * `maxQueued` events handed and not yet taken) leaves it, applies what it was handed, reads on its
 * own from there, and joins again once it is back at the head. So a slow projection delays only
 * itself. The shared read stops when nobody follows it, and starts again at the next join.
 */
export class SharedProjectionReads {
  /** reads a follower made on its own (catching up, behind, or closing a gap) */
  ownReads = 0;
  /** shared reads started (one subscription each) */
  feedsStarted = 0;
  private readonly union: EventFilter;
  private readonly covered: (filter: EventFilter | undefined) => boolean;
  private feed: Feed | null = null;
  private readonly followers = new Set<Follower>();

  constructor(
    private readonly store: EventStore,
    /** the filters of the projections that may follow; the shared read takes their union */
    filters: readonly (EventFilter | undefined)[],
    private readonly options: { batchSize?: number; maxQueued?: number } = {},
  ) {
    this.union = unionOf(filters);
    this.covered = coveredBy(this.union);
  }

  /** the events `options.filter` takes after `options.afterPosition`, in order, in batches: catch-up, then live */
  follow(options: FollowOptions): FollowedEvents {
    const follower: Follower = {
      filter: options.filter,
      takes: matchesEventFilter(options.filter),
      maxBatchSize: options.maxBatchSize,
      handedTo: options.afterPosition,
      queue: [],
      feed: null,
      gap: null,
      closed: false,
      wake: () => undefined,
    };
    this.followers.add(follower);
    const close = async () => {
      follower.closed = true;
      this.followers.delete(follower);
      this.leave(follower);
      follower.wake();
    };
    return {
      close,
      takeQueued: (maxCount) => (follower.gap || maxCount <= 0 ? [] : follower.queue.splice(0, maxCount)),
      [Symbol.asyncIterator]: () => ({
        next: () => this.next(follower),
        return: async () => {
          await close();
          return { value: undefined, done: true };
        },
      }),
    };
  }

  private async next(follower: Follower): Promise<IteratorResult<EventWithoutMetadata[]>> {
    while (!follower.closed) {
      if (follower.gap) {
        const events = await this.readGap(follower, follower.gap);
        if (events.length > 0) return { value: events, done: false };
        continue;
      }
      if (follower.queue.length > 0) return { value: follower.queue.splice(0, follower.maxBatchSize), done: false };
      if (follower.feed) {
        await new Promise<void>((resolve) => (follower.wake = resolve));
        continue;
      }
      const { events, scannedTo } = await this.readOwn(follower, follower.handedTo);
      if (follower.closed) break;
      if (scannedTo > follower.handedTo) follower.handedTo = scannedTo;
      // cut short: it has seen the head, and joins the shared read from there
      if (events.length < follower.maxBatchSize && this.covered(follower.filter)) this.join(follower);
      if (events.length > 0) return { value: events, done: false };
    }
    return { value: undefined, done: true };
  }

  private async readOwn(follower: Follower, afterPosition: bigint) {
    this.ownReads++;
    return this.store.readAllScanned({ afterPosition, maxCount: follower.maxBatchSize, filter: follower.filter, metadata: false });
  }

  /** the events it takes in (gap.from, gap.to]: the gap is closed once a read looked past gap.to or was cut short */
  private async readGap(follower: Follower, gap: { from: bigint; to: bigint }): Promise<EventWithoutMetadata[]> {
    const { events, scannedTo } = await this.readOwn(follower, gap.from);
    const inGap = events.filter((event) => event.position <= gap.to);
    const last = inGap.length > 0 ? inGap[inGap.length - 1]!.position : gap.from;
    if (events.length < follower.maxBatchSize || scannedTo >= gap.to || inGap.length < events.length) follower.gap = null;
    else follower.gap = { from: last, to: gap.to };
    return follower.closed ? [] : inGap;
  }

  private join(follower: Follower): void {
    if (!this.feed) this.startFeed(follower.handedTo);
    const feed = this.feed!;
    if (follower.handedTo < feed.handedTo) {
      follower.gap = { from: follower.handedTo, to: feed.handedTo };
      follower.handedTo = feed.handedTo;
    }
    follower.feed = feed;
  }

  private leave(follower: Follower): void {
    const { feed } = follower;
    follower.feed = null;
    if (feed && feed === this.feed && ![...this.followers].some((other) => other.feed === feed)) {
      this.feed = null;
      void feed.subscription.close();
    }
  }

  private startFeed(afterPosition: bigint): void {
    const batchSize = this.options.batchSize ?? 1000;
    const maxQueued = this.options.maxQueued ?? 4 * batchSize;
    const feed: Feed = { subscription: this.store.subscribeToAll({ afterPosition, filter: this.union, maxBatchSize: batchSize, metadata: false }), handedTo: afterPosition };
    this.feed = feed;
    this.feedsStarted++;
    void (async () => {
      try {
        for await (const batch of feed.subscription) {
          if (this.feed !== feed) break;
          for (const follower of this.followers) if (follower.feed === feed) this.hand(follower, batch, maxQueued);
          feed.handedTo = batch[batch.length - 1]!.position;
        }
      } catch {
        // the shared read failed (the store unavailable): its followers read on their own, and their runners see the failure
      } finally {
        if (this.feed === feed) this.feed = null;
        void feed.subscription.close();
        for (const follower of this.followers) {
          if (follower.feed !== feed) continue;
          follower.feed = null;
          follower.wake();
        }
      }
    })();
  }

  private hand(follower: Follower, batch: readonly EventWithoutMetadata[], maxQueued: number): void {
    const taken = batch.filter((event) => event.position > follower.handedTo && follower.takes(event));
    const last = batch[batch.length - 1]!.position;
    if (last > follower.handedTo) follower.handedTo = last;
    if (taken.length === 0) return;
    for (const event of taken) follower.queue.push(event);
    // it falls behind: the shared read goes on without it; it reads on its own once its queue is taken
    if (follower.queue.length > maxQueued) this.leave(follower);
    follower.wake();
  }
}

/** whether every event `filter` takes is one `union` takes */
const coveredBy =
  (union: EventFilter) =>
  (filter: EventFilter | undefined): boolean => {
    const within = (outer: readonly string[] | undefined, inner: readonly string[] | undefined) => !outer || (inner !== undefined && inner.every((item) => outer.includes(item)));
    return within(union.categories, filter?.categories) && within(union.types, filter?.types);
  };
