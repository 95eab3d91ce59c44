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

/**
 * CONTRACT §3: failed logins are limited per username AND client address, so one address guessing
 * wrong is refused (429) while the person, from their own address, still gets in. Failures of a
 * username from everywhere only slow its logins down (up to MAX_LOGIN_SLOWDOWN_MS), never block
 * them: nobody can lock an approver out by failing on purpose.
 */
export class LoginLimits {
  private readonly perAddress: RateLimiter;
  private readonly perUsername: RateLimiter;
  private checking = 0;

  constructor(
    limitPerMinute: number,
    now: () => number,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    private readonly maxConcurrentChecks = MAX_CONCURRENT_PASSWORD_CHECKS,
  ) {
    this.perAddress = new RateLimiter(limitPerMinute, 60_000, now);
    this.perUsername = new RateLimiter(limitPerMinute, 60_000, now);
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

  failed(username: string, address: string): void {
    this.perAddress.record(this.addressKey(username, address));
    this.perUsername.record(this.usernameKey(username));
  }

  succeeded(username: string, address: string): void {
    this.perAddress.reset(this.addressKey(username, address));
  }

  private addressKey = (username: string, address: string) => `login:${canonicalUsername(username)}:${address}`;
  private usernameKey = (username: string) => `login:${canonicalUsername(username)}`;
}
