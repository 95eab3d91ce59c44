import { afterEach, describe, expect, it, vi } from 'vitest';
import { timeOrderedId } from '../../src/lib/time-ordered-id.js';

const VERSION_7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const millisecondsOf = (id: string) => Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16);

describe('time-ordered ids', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('are version 7 UUIDs starting with the milliseconds they were made at, each different, each after the one before', () => {
    const before = Date.now();
    const ids = Array.from({ length: 100_000 }, () => timeOrderedId());
    const after = Date.now();
    expect(new Set(ids).size).toBe(ids.length);
    ids.forEach((id, index) => {
      expect(id).toMatch(VERSION_7);
      expect(millisecondsOf(id)).toBeGreaterThanOrEqual(before);
      expect(millisecondsOf(id)).toBeLessThanOrEqual(after);
      if (index > 0) expect(id > ids[index - 1]!).toBe(true);
    });
  });

  it('still sort after the earlier ones when the clock steps back', () => {
    const first = timeOrderedId();
    vi.spyOn(Date, 'now').mockReturnValue(millisecondsOf(first) - 60_000);
    const later = Array.from({ length: 1_000 }, () => timeOrderedId());
    expect(later.every((id, index) => id > (index === 0 ? first : later[index - 1]!))).toBe(true);
    expect(millisecondsOf(later.at(-1)!)).toBeGreaterThanOrEqual(millisecondsOf(first));
  });

  it('are returned as strings of their own, not a buffer shared between calls', () => {
    const first = timeOrderedId();
    const copy = `${first}`;
    timeOrderedId();
    expect(first).toBe(copy);
  });
});
