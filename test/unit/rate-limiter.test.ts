import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/api/rate-limiter.js';

describe('rate limiter (sliding window)', () => {
  it('allows up to the limit in a window, then refuses with the seconds until a hit fits', () => {
    let now = 120_000; // the start of a window
    const limiter = new RateLimiter(3, 60_000, () => now);
    expect([1, 2, 3].map(() => limiter.take('k').allowed)).toEqual([true, true, true]);
    now += 10_000;
    expect(limiter.take('k')).toEqual({ allowed: false, retryAfterSeconds: 50 + 0 });
    expect(limiter.take('other').allowed).toBe(true);
  });

  it('weights the previous window by how much of it still overlaps', () => {
    let now = 0;
    const limiter = new RateLimiter(4, 60_000, () => now);
    for (let i = 0; i < 4; i++) limiter.take('k');
    now = 60_000 + 15_000; // previous window (4 hits) still weighs 3/4: count 3
    expect(limiter.take('k').allowed).toBe(true); // 3 + 1 = 4 now
    const refused = limiter.take('k');
    expect(refused.allowed).toBe(false);
    // count = 4 * (1 - e/60) + 1 < 4 once e > 15 s: 1 ms later; whole seconds round up to 1
    expect(refused).toEqual({ allowed: false, retryAfterSeconds: 1 });
    now = 60_000 + 16_000;
    expect(limiter.take('k').allowed).toBe(true);
  });

  it('does not count refused hits, and forgets keys on reset', () => {
    let now = 0;
    const limiter = new RateLimiter(1, 60_000, () => now);
    expect(limiter.take('k').allowed).toBe(true);
    for (let i = 0; i < 10; i++) expect(limiter.take('k').allowed).toBe(false);
    now = 120_000; // two windows later: nothing carries over
    expect(limiter.take('k').allowed).toBe(true);
    limiter.reset('k');
    expect(limiter.take('k').allowed).toBe(true);
  });

  it('keeps its memory bounded', () => {
    const limiter = new RateLimiter(1, 60_000, () => 0, 10);
    for (let i = 0; i < 100; i++) limiter.take(`k${i}`);
    expect((limiter as unknown as { windows: Map<string, unknown> }).windows.size).toBe(10);
  });

  it('stores no key for a check alone, so checks of fresh keys never evict a counted one', () => {
    const limiter = new RateLimiter(1, 60_000, () => 0, 2);
    limiter.record('counted');
    for (let i = 0; i < 10; i++) expect(limiter.check(`fresh${i}`).allowed).toBe(true);
    expect(limiter.check('counted').allowed).toBe(false);
  });
});
