/**
 * A Map that holds at most `limit` entries: setting one more drops the least recently used (a hit
 * moves an entry to the back). What a process keeps in memory per organization or per key is
 * bounded by it, however many there are.
 */
export class BoundedMap<Key, Value> {
  private readonly entries = new Map<Key, Value>();

  constructor(readonly limit: number) {
    if (!(limit >= 1)) throw new Error(`a bounded map holds at least one entry, not ${limit}`);
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: Key): Value | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  set(key: Key, value: Value): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.limit) this.entries.delete(this.entries.keys().next().value as Key);
  }

  delete(key: Key): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
