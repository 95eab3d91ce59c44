import { describe, expect, it } from 'vitest';
import { LoginLimits, MAX_LOGIN_SLOWDOWN_MS } from '../../src/api/auth/login-limits.js';

describe('LoginLimits: failures limited per username and address; elsewhere they only slow, never block', () => {
  const setup = () => {
    const slept: number[] = [];
    const limits = new LoginLimits(3, () => Date.parse('2026-11-24T00:00:10Z'), async (ms) => void slept.push(ms));
    return { limits, slept };
  };

  it('refuses the address that failed too often, and lets the person in from their own address, only slowed', async () => {
    const { limits, slept } = setup();
    for (let n = 0; n < 3; n++) {
      expect(await limits.admit('Alice', '203.0.113.9')).toEqual({ allowed: true });
      limits.failed('alice', '203.0.113.9', { knownUser: true });
    }
    expect(await limits.admit('alice', '203.0.113.9')).toMatchObject({ allowed: false, retryAfterSeconds: expect.any(Number) });
    expect(slept).toEqual([]);
    expect(await limits.admit('alice', '198.51.100.7')).toEqual({ allowed: true });
    expect(slept).toHaveLength(1);
    expect(slept[0]).toBeGreaterThan(0);
    expect(slept[0]).toBeLessThanOrEqual(MAX_LOGIN_SLOWDOWN_MS);
  });

  it('failures sprayed from many addresses never block the username anywhere', async () => {
    const { limits, slept } = setup();
    for (let n = 0; n < 20; n++) limits.failed('bob', `192.0.2.${n}`, { knownUser: true });
    for (let n = 0; n < 20; n++) expect(await limits.admit('bob', `192.0.2.${n}`)).toEqual({ allowed: true });
    expect(await limits.admit('bob', '198.51.100.7')).toEqual({ allowed: true });
    expect(slept.every((ms) => ms > 0 && ms <= MAX_LOGIN_SLOWDOWN_MS)).toBe(true);
    // another username is untouched
    expect(await limits.admit('carol', '192.0.2.1')).toEqual({ allowed: true });
    expect(slept).toHaveLength(21);
  });
});

describe('LoginLimits: noise never evicts a real user\'s counters', () => {
  it('a flood of failed logins for random usernames neither lifts a real user\'s refusal nor their slow-down, and memory stays bounded', async () => {
    const slept: number[] = [];
    const limits = new LoginLimits(3, () => Date.parse('2026-11-24T00:00:10Z'), async (ms) => void slept.push(ms));
    for (let n = 0; n < 3; n++) limits.failed('alice', '203.0.113.9', { knownUser: true });
    expect(await limits.admit('alice', '203.0.113.9')).toMatchObject({ allowed: false });

    // more random names than any counter map holds (the service-wide default), failing from the guesser's address and others
    const flood = 120_000;
    for (let n = 0; n < flood; n++) {
      const name = `noise-${n.toString(36)}`;
      const address = `198.51.${(n >> 8) & 255}.${n & 255}`;
      await limits.admit(name, address);
      limits.failed(name, address, { knownUser: false });
    }

    expect(await limits.admit('alice', '203.0.113.9')).toMatchObject({ allowed: false, retryAfterSeconds: expect.any(Number) });
    slept.length = 0;
    expect(await limits.admit('alice', '192.0.2.1')).toEqual({ allowed: true });
    expect(slept).toHaveLength(1);
    const sizes = Object.values(limits as unknown as Record<string, unknown>)
      .flatMap((counters) => (typeof counters === 'object' && counters ? Object.values(counters) : []))
      .flatMap((limiter) => (typeof limiter === 'object' && limiter && 'windows' in limiter ? [(limiter.windows as Map<string, unknown>).size] : []));
    expect(sizes.length).toBeGreaterThan(0);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(100_000);
  });

  it('an unknown username is limited like a real one (no oracle): refused from the failing address, slowed elsewhere', async () => {
    const slept: number[] = [];
    const limits = new LoginLimits(3, () => Date.parse('2026-11-24T00:00:10Z'), async (ms) => void slept.push(ms));
    for (let n = 0; n < 3; n++) limits.failed('nobody', '203.0.113.9', { knownUser: false });
    expect(await limits.admit('nobody', '203.0.113.9')).toMatchObject({ allowed: false });
    expect(await limits.admit('nobody', '192.0.2.1')).toEqual({ allowed: true });
    expect(slept).toHaveLength(1);
  });
});

describe('LoginLimits: a bound on password checks at once', () => {
  it('runs at most the bound at once; beyond it a check is refused at once, and the slot frees when one ends', async () => {
    const limits = new LoginLimits(10, () => 0, async () => undefined, 2);
    const releases: (() => void)[] = [];
    const slow = () => new Promise<string>((resolve) => releases.push(() => resolve('checked')));
    const first = limits.withPasswordCheck(slow);
    const second = limits.withPasswordCheck(slow);
    expect(await limits.withPasswordCheck(slow)).toBeNull();
    releases[0]!();
    expect(await first).toEqual({ done: 'checked' });
    const third = limits.withPasswordCheck(slow);
    releases[1]!();
    releases[2]!();
    expect(await second).toEqual({ done: 'checked' });
    expect(await third).toEqual({ done: 'checked' });
  });
});
