import { describe, expect, it } from 'vitest';
import { BoundedMap } from '../../src/lib/bounded-map.js';

/** The least-recently-used rule spelled out on a plain Map: what a BoundedMap must hold after each step. */
class ReferenceLru {
  readonly entries = new Map<number, number>();
  constructor(private readonly limit: number) {}
  get(key: number): number | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }
  set(key: number, value: number): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.limit) this.entries.delete([...this.entries.keys()][0]!);
  }
}

/** a small deterministic generator, so a failure is reproduced by the same run */
const numbers = (seed: number) => () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};

describe('BoundedMap', () => {
  it('drops the least recently used entry when one more is set', () => {
    const map = new BoundedMap<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    expect(map.get('a')).toBe(1);
    map.set('c', 3);
    expect(map.get('b')).toBeUndefined();
    expect(map.get('a')).toBe(1);
    expect(map.get('c')).toBe(3);
    expect(map.size).toBe(2);
  });

  it('holds what the least-recently-used rule holds through sets, hits, deletes and clears mixed at random', () => {
    for (const limit of [1, 3, 50]) {
      const random = numbers(limit);
      const map = new BoundedMap<number, number>(limit);
      const reference = new ReferenceLru(limit);
      for (let step = 0; step < 20_000; step++) {
        const key = Math.floor(random() * limit * 3);
        const choice = random();
        if (choice < 0.45) expect(map.get(key)).toBe(reference.get(key));
        else if (choice < 0.9) {
          map.set(key, step);
          reference.set(key, step);
        } else if (choice < 0.999) {
          map.delete(key);
          reference.entries.delete(key);
        } else {
          map.clear();
          reference.entries.clear();
        }
        expect(map.size).toBe(reference.entries.size);
      }
      for (const [key, value] of reference.entries) expect(map.get(key)).toBe(value);
    }
  });
});
