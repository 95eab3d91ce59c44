/**
 * A sliding-window counter per key (the previous fixed window, weighted by how much of it still
 * overlaps, plus the current one). Memory is bounded: stale keys are dropped, and past `maxKeys`
 * the oldest are evicted. Only a recorded hit stores a key.
 */
export class RateLimiter {
  private readonly windows = new Map<string, { start: number; current: number; previous: number }>();
  private hits = 0;

  constructor(
    private readonly limit: number,
    private readonly windowMs = 60_000,
    private readonly now: () => number = Date.now,
    private readonly maxKeys = 100_000,
  ) {}

  /** whether one more hit is allowed now, and if not, in how many whole seconds to retry */
  check(key: string): { allowed: true } | { allowed: false; retryAfterSeconds: number } {
    // a key never hit is allowed without being stored: checking alone never evicts another key's count
    if (!this.windows.has(key)) return { allowed: true };
    const window = this.windowFor(key);
    const elapsed = this.now() - window.start;
    const weight = 1 - elapsed / this.windowMs;
    const count = window.previous * weight + window.current;
    if (count < this.limit) return { allowed: true };
    // the earliest moment the weighted count drops below the limit, if no further hit arrives
    const waitMs =
      window.current < this.limit
        ? this.windowMs * (1 - (this.limit - window.current) / window.previous) - elapsed
        : this.windowMs - elapsed + this.windowMs * (1 - this.limit / window.current);
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
  }

  record(key: string): void {
    this.windowFor(key).current++;
    if (++this.hits % 1000 === 0) this.sweep();
  }

  /** check, and record the hit when it is allowed */
  take(key: string): ReturnType<RateLimiter['check']> {
    const verdict = this.check(key);
    if (verdict.allowed) this.record(key);
    return verdict;
  }

  reset(key: string): void {
    this.windows.delete(key);
  }

  private windowFor(key: string) {
    const now = this.now();
    const start = now - (now % this.windowMs);
    let window = this.windows.get(key);
    if (!window) {
      if (this.windows.size >= this.maxKeys) this.windows.delete(this.windows.keys().next().value as string);
      window = { start, current: 0, previous: 0 };
      this.windows.set(key, window);
    } else if (window.start !== start) {
      window.previous = start - window.start === this.windowMs ? window.current : 0;
      window.current = 0;
      window.start = start;
    }
    return window;
  }

  private sweep() {
    const cutoff = this.now() - 2 * this.windowMs;
    for (const [key, window] of this.windows) if (window.start < cutoff) this.windows.delete(key);
  }
}
