import { BoundedMap } from '../lib/bounded-map.js';
import type { EventStore, ExpectedRevision } from '../eventstore/port.js';

export interface LoadedStream<State> {
  state: State;
  expectedRevision: ExpectedRevision;
}

/** what `get` answers: the stream, and whether it came from memory (then it may lag another process's append by a notification) */
export type CachedStream<State> = LoadedStream<State> & { fromMemory: boolean };

/**
 * The folded state of the streams of one category, kept in memory (at most `limit` streams) while
 * the store's change feed vouches for it: an append of this process drops its stream before the
 * appender hears back, another process's when the store's notification arrives, and a lost feed
 * drops everything. Without a feed (an adapter that cannot tell), every `get` reads the store.
 *
 * A load that was in flight when its stream changed (or the feed reset) is answered but not kept:
 * each change bumps a generation, and only a load that saw no change while it read is stored.
 */
export class StreamCache<State> {
  private readonly entries: BoundedMap<string, LoadedStream<State>>;
  private generation = 0;
  private readonly unfollow: () => void;

  constructor(
    private readonly store: Pick<EventStore, 'changes'>,
    category: string,
    private readonly load: (stream: string) => Promise<LoadedStream<State>>,
    limit = 10_000,
  ) {
    this.entries = new BoundedMap(limit);
    this.unfollow =
      store.changes?.follow([category], {
        changed: (stream) => {
          this.generation++;
          this.entries.delete(stream);
        },
        reset: () => {
          this.generation++;
          this.entries.clear();
        },
      }) ?? (() => undefined);
  }

  /** the stream's state and revision as memory holds it, at once; undefined when memory does not vouch for one */
  remembered(stream: string): CachedStream<State> | undefined {
    if (!(this.store.changes?.following() ?? false)) return undefined;
    const kept = this.entries.get(stream);
    return kept && { ...kept, fromMemory: true };
  }

  /** the stream's state and revision: from memory unless `fresh` (then read, and kept for the next) */
  async get(stream: string, { fresh = false }: { fresh?: boolean } = {}): Promise<CachedStream<State>> {
    const remembered = fresh ? undefined : this.remembered(stream);
    if (remembered) return remembered;
    const following = this.store.changes?.following() ?? false;
    const generation = this.generation;
    const loaded = await this.load(stream);
    if (following && generation === this.generation && this.store.changes?.following()) this.entries.set(stream, loaded);
    return { ...loaded, fromMemory: false };
  }

  /** streams held in memory (for tests and diagnostics) */
  get size(): number {
    return this.entries.size;
  }

  close(): void {
    this.unfollow();
    this.entries.clear();
  }
}
