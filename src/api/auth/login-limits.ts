import type { Context } from 'hono';
import { canonicalUsername } from '../../domain/streams.js';
import { RateLimiter } from '../rate-limiter.js';

/** the longest a login waits because its username failed elsewhere: enough to make guessing slow, never a lockout */
export const MAX_LOGIN_SLOWDOWN_MS = 2_000;

/**
 * Password checks (scrypt, ~50 ms of CPU and 32 MiB each) running at once in this process: beyond
 * it a login is 429 at once, so a flood of logins (any usernames, from anywhere) cannot take the
 * CPU or the memory from everything else.
 */
export const MAX_CONCURRENT_PASSWORD_CHECKS = 8;

/** The client's address as the socket gives it (Node's server); unknown when there is none (an in-process request). */
export const clientAddressOf = (c: Context): string => {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } }; server?: { incoming?: { socket?: { remoteAddress?: string } } } } | undefined;
  return env?.incoming?.socket?.remoteAddress ?? env?.server?.incoming?.socket?.remoteAddress ?? 'unknown';
};

/** failure counters kept per kind (real users', noise) and per limit; past it the oldest of that kind are forgotten */
export const MAX_LOGIN_COUNTERS = 100_000;

/**
 * Failure counters per username + address and per username. Failures of real users and failures of
 * usernames nobody has ("noise") are kept in separate bounded maps, each evicting only its own
 * keys: a flood of random usernames can fill the noise maps, never forget a real user's count. A
 * check reads both (a username can become real, or stop being), and never stores a key.
 */
class FailureCounters {
  private readonly real: RateLimiter;
  private readonly noise: RateLimiter;

  constructor(limitPerMinute: number, now: () => number, maxKeys: number) {
    this.real = new RateLimiter(limitPerMinute, 60_000, now, maxKeys);
    this.noise = new RateLimiter(limitPerMinute, 60_000, now, maxKeys);
  }

  check(key: string): ReturnType<RateLimiter['check']> {
    const real = this.real.check(key);
    return real.allowed ? this.noise.check(key) : real;
  }

  record(key: string, knownUser: boolean): void {
    (knownUser ? this.real : this.noise).record(key);
  }

  reset(key: string): void {
    this.real.reset(key);
    this.noise.reset(key);
  }
}

/**
 * CONTRACT §3: failed logins are limited per username AND client address, so one address guessing
 * wrong is refused (429) while the person, from their own address, still gets in. Failures of a
 * username from everywhere only slow its logins down (up to MAX_LOGIN_SLOWDOWN_MS), never block
 * them: nobody can lock an approver out by failing on purpose. Unknown usernames are limited the
 * same way (no username oracle), in counters of their own (FailureCounters).
 */
export class LoginLimits {
  private readonly perAddress: FailureCounters;
  private readonly perUsername: FailureCounters;
  private checking = 0;

  constructor(
    limitPerMinute: number,
    now: () => number,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    private readonly maxConcurrentChecks = MAX_CONCURRENT_PASSWORD_CHECKS,
    maxCounters = MAX_LOGIN_COUNTERS,
  ) {
    this.perAddress = new FailureCounters(limitPerMinute, now, maxCounters);
    this.perUsername = new FailureCounters(limitPerMinute, now, maxCounters);
  }

  /** refused (with when to retry), or allowed after the username's slow-down */
  async admit(username: string, address: string): Promise<{ allowed: true } | { allowed: false; retryAfterSeconds: number }> {
    const verdict = this.perAddress.check(this.addressKey(username, address));
    if (!verdict.allowed) return verdict;
    const elsewhere = this.perUsername.check(this.usernameKey(username));
    // over the limit from everywhere: this address is not the guesser, so it waits a little instead
    if (!elsewhere.allowed) await this.sleep(Math.min(MAX_LOGIN_SLOWDOWN_MS, elsewhere.retryAfterSeconds * 100));
    return { allowed: true };
  }

  /** runs one password check within the service-wide bound, or refuses it (null) when the bound is reached */
  async withPasswordCheck<T>(check: () => Promise<T>): Promise<{ done: T } | null> {
    if (this.checking >= this.maxConcurrentChecks) return null;
    this.checking++;
    try {
      return { done: await check() };
    } finally {
      this.checking--;
    }
  }

  /** a failed login; `knownUser` false when the username names no user (counted apart, as noise) */
  failed(username: string, address: string, { knownUser }: { knownUser: boolean }): void {
    this.perAddress.record(this.addressKey(username, address), knownUser);
    this.perUsername.record(this.usernameKey(username), knownUser);
  }

  succeeded(username: string, address: string): void {
    this.perAddress.reset(this.addressKey(username, address));
  }

  private addressKey = (username: string, address: string) => `login:${canonicalUsername(username)}:${address}`;
  private usernameKey = (username: string) => `login:${canonicalUsername(username)}`;
}
