/**
 * A Map that holds at most `limit` entries: setting one more drops the least recently used (a hit
 * moves an entry to the back). What a process keeps in memory per organization or per key is
 * bounded by it, however many there are.
 */
export class BoundedMap<Key, Value> {
  private readonly entries = new Map<Key, Value>();
  /**
   * Walks the entries from the least recently used on, one eviction at a time. A Map keeps a
   * deleted entry's slot until it is rehashed, and a new iterator starts at the first slot, so
   * evicting through `keys().next()` skipped every slot emptied since the last rehash (on a full
   * map of 10,000, about 10 µs a set). This one goes on from where the last eviction stopped:
   * every entry before it was evicted or moved to the back since. Made at the first eviction (an
   * iterator keeps the table it last saw, so one made at the start would hold every table the
   * map grew through).
   */
  private oldest: Iterator<Key> | null = null;
  /**
   * The entry at the back (the last set or hit), when known: a hit on it is already where a hit
   * moves an entry, so it is answered without the delete and set, each of which leaves the Map a
   * deleted slot to rehash away (one tenant's requests hit the same key again and again).
   */
  private newest: Key | undefined;
  private newestKnown = false;

  constructor(readonly limit: number) {
    if (!(limit >= 1)) throw new Error(`a bounded map holds at least one entry, not ${limit}`);
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: Key): Value | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    if (this.newestKnown && this.newest === key) return value;
    this.entries.delete(key);
    this.entries.set(key, value);
    this.markNewest(key);
    return value;
  }

  set(key: Key, value: Value): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    this.markNewest(key);
    if (this.entries.size > this.limit) this.entries.delete(this.leastRecentlyUsed());
  }

  private markNewest(key: Key): void {
    this.newest = key;
    this.newestKnown = true;
  }

  private leastRecentlyUsed(): Key {
    let next = this.oldest?.next();
    if (!next || next.done) {
      // at the end (or before the first eviction): the map's oldest entry is its first
      this.oldest = this.entries.keys();
      next = this.oldest.next();
    }
    return next.value as Key;
  }

  delete(key: Key): void {
    this.entries.delete(key);
    if (this.newest === key) this.newestKnown = false;
  }

  clear(): void {
    this.entries.clear();
    this.oldest = null;
    this.newestKnown = false;
  }
}
