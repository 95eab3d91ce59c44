import { describe, expect, it } from 'vitest';
import { sharedBalanceReads } from '../../src/application/shared-balance-reads.js';
import type { ChainGateway } from '../../src/chains/gateway.js';
import { BoundedMap } from '../../src/lib/bounded-map.js';

/** A gateway whose balance reads are held until the test lets each go, answering the balance when the read began. */
const heldGateway = () => {
  const chain = { balance: 100n, reads: 0, release: [] as (() => void)[] };
  const gateway = {
    name: 'held',
    balance(): Promise<bigint> {
      chain.reads++;
      const seen = chain.balance;
      return new Promise<bigint>((resolve) => chain.release.push(() => resolve(seen)));
    },
    describe(this: { name: string }) {
      return this.name;
    },
  };
  return { chain, gateway: gateway as unknown as ChainGateway & { describe(): string } };
};

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('balance reads shared by concurrent requests', () => {
  it('64 concurrent asks cost two reads, and each answer was read after its ask', async () => {
    const { chain, gateway } = heldGateway();
    const lookup = sharedBalanceReads(() => gateway);
    const first = lookup('eip155:1')!.balance('0xgas', 'native');
    await settle();
    // funded while the first read is under way: those who ask now must see it
    chain.balance = 250n;
    const later = Array.from({ length: 63 }, () => lookup('eip155:1')!.balance('0xgas', 'native'));
    await settle();
    expect(chain.reads).toBe(1);
    chain.release.shift()!();
    expect(await first).toBe(100n);
    await settle();
    expect(chain.reads).toBe(2);
    chain.release.shift()!();
    expect(await Promise.all(later)).toEqual(Array(63).fill(250n));
  });

  it('an ask that takes a recent answer gets the last read without reading; a refusal-grade ask still reads after it', async () => {
    const { chain, gateway } = heldGateway();
    const shared = sharedBalanceReads(() => gateway)('eip155:1')!;
    const first = shared.balance('0xgas', 'native');
    await settle();
    chain.release.shift()!();
    expect(await first).toBe(100n);
    chain.balance = 0n; // drained since that read
    // an hour's old answer will do: the last read's, no read
    expect(await shared.balance('0xgas', 'native', { recentMs: 3_600_000 })).toBe(100n);
    expect(chain.reads).toBe(1);
    // none will (0): read anew, after the ask
    const fresh = shared.balance('0xgas', 'native', { recentMs: 0 });
    await settle();
    expect(chain.reads).toBe(2);
    chain.release.shift()!();
    expect(await fresh).toBe(0n);
    // another address has no last answer: it is read
    const other = shared.balance('0xother', 'native', { recentMs: 3_600_000 });
    await settle();
    expect(chain.reads).toBe(3);
    chain.release.shift()!();
    expect(await other).toBe(0n);
  });

  it('reads of other addresses are not shared, and every other call reaches the gateway as it is', async () => {
    const { chain, gateway } = heldGateway();
    const lookup = sharedBalanceReads((chainId) => (chainId === 'eip155:1' ? gateway : undefined));
    const reads = [lookup('eip155:1')!.balance('0xa', 'native'), lookup('eip155:1')!.balance('0xb', 'native')];
    await settle();
    expect(chain.reads).toBe(2);
    for (const release of chain.release.splice(0)) release();
    expect(await Promise.all(reads)).toEqual([100n, 100n]);
    expect((lookup('eip155:1') as ReturnType<typeof heldGateway>['gateway']).describe()).toBe('held');
    expect(lookup('eip155:137')).toBeUndefined();
  });
});

describe('a bounded map', () => {
  it('drops the least recently used entry beyond its limit', () => {
    const map = new BoundedMap<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    expect(map.get('a')).toBe(1);
    map.set('c', 3);
    expect([map.get('a'), map.get('b'), map.get('c'), map.size]).toEqual([1, undefined, 3, 2]);
    expect(() => new BoundedMap(0)).toThrow();
  });
});
