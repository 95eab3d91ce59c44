import { describe, expect, it } from 'vitest';
import { msUntilNextTick } from '../../src/lib/pause.js';

describe('aligned passes (msUntilNextTick)', () => {
  it('wakes workers that finished at different times on the same multiple of the period', () => {
    const period = 1000;
    const finishedAt = [5_000_001, 5_000_250, 5_000_999];
    expect(finishedAt.map((now) => now + msUntilNextTick(now, period))).toEqual([5_001_000, 5_001_000, 5_001_000]);
  });

  it('never answers 0: a worker finishing on a multiple waits a whole period, so passes never run back to back', () => {
    expect(msUntilNextTick(7_000, 1000)).toBe(1000);
    expect(msUntilNextTick(7_001, 1000)).toBe(999);
    expect(msUntilNextTick(50, 50)).toBe(50);
  });
});
