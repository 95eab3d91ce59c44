import { describe, expect, it } from 'vitest';
import { findForkPoint } from '../../src/processes/deposit-watcher/fork-point.js';
import { abandonedAbove, applyDepositEvent, dueForConfirmation, supersededAt, type UnconfirmedDeposits } from '../../src/processes/deposit-watcher/unconfirmed.js';
import { addAccount, addServiceWallet, attribute, emptyWatchSet, watchedAddresses } from '../../src/processes/deposit-watcher/watch-set.js';

const ORG = 'org-1';
/** a sender outside the service */
const OUTSIDER = 'outside-sender';

describe('watch set', () => {
  it('EVM: an address matches in any case, and the gateway is asked about it as handed out', () => {
    const set = emptyWatchSet('evm');
    addAccount(set, { orgId: ORG, chainId: 'eip155:1', externalUserId: 'alice', properties: { address: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94' } });
    const owner = { orgId: ORG, externalUserId: 'alice', accountChainId: 'eip155:1' };
    expect(attribute(set, { from: OUTSIDER, to: '0x9858effd232b4033e47d90003d41ec34ecaeda94', destinationTag: null })).toEqual(owner);
    expect(attribute(set, { from: OUTSIDER, to: '0x9858EFFD232B4033E47D90003D41EC34ECAEDA94', destinationTag: null })).toEqual(owner);
    expect(attribute(set, { from: OUTSIDER, to: '0x000000000000000000000000000000000000dEaD', destinationTag: null })).toBeUndefined();
    expect([...watchedAddresses(set)]).toEqual(['0x9858EfFD232B4033E47d90003D41EC34EcaEda94']);
  });

  it('the addresses to ask about are a live view of the set, answering as a set of the addresses as handed out', () => {
    const set = emptyWatchSet('evm');
    const asked = watchedAddresses(set);
    expect(asked.size).toBe(0);
    addAccount(set, { orgId: ORG, chainId: 'eip155:1', externalUserId: 'alice', properties: { address: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94' } });
    addAccount(set, { orgId: ORG, chainId: 'eip155:1', externalUserId: 'bob', properties: { address: '0x000000000000000000000000000000000000b0B0' } });
    addServiceWallet(set, '0x5E771E0000000000000000000000000000000001');
    expect(asked.size).toBe(2);
    expect([...asked]).toEqual(['0x9858EfFD232B4033E47d90003D41EC34EcaEda94', '0x000000000000000000000000000000000000b0B0']);
    expect(new Set(asked)).toEqual(new Set(set.addresses.values()));
    expect(asked.has('0x9858EfFD232B4033E47d90003D41EC34EcaEda94')).toBe(true);
    expect(asked.has('0x9858effd232b4033e47d90003d41ec34ecaeda94')).toBe(false); // not as handed out: a copy of the values would not have it either
    expect(asked.has('0x5E771E0000000000000000000000000000000001')).toBe(false);
    const seen: string[] = [];
    asked.forEach((address, key) => seen.push(`${address}=${key}`));
    expect(seen).toEqual([...asked].map((address) => `${address}=${address}`));
    expect([...asked.entries()]).toEqual([...asked].map((address) => [address, address]));
  });

  it('Tron: base58 is case-sensitive', () => {
    const set = emptyWatchSet('tron');
    addAccount(set, { orgId: ORG, chainId: 'tron:shasta', externalUserId: 'bob', properties: { address: 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH' } });
    expect(attribute(set, { from: OUTSIDER, to: 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH', destinationTag: null })).toMatchObject({ externalUserId: 'bob' });
    expect(attribute(set, { from: OUTSIDER, to: 'tuezsdksodhqmezwihtdobin46zxhgwydh', destinationTag: null })).toBeUndefined();
  });

  it('XRP: the tag names the user; a missing or unknown tag at an organization address is ours but nobody’s (null)', () => {
    const set = emptyWatchSet('xrp');
    const address = 'rHsMGQEkVNJmpGWs8XUBoTBiAAbwxZN5v3';
    addAccount(set, { orgId: ORG, chainId: 'xrpl:mainnet', externalUserId: 'carol', properties: { address, destinationTag: '1' } });
    addAccount(set, { orgId: ORG, chainId: 'xrpl:mainnet', externalUserId: 'dave', properties: { address, destinationTag: '2' } });
    expect(attribute(set, { from: OUTSIDER, to: address, destinationTag: 1 })).toEqual({ orgId: ORG, externalUserId: 'carol', accountChainId: 'xrpl:mainnet' });
    expect(attribute(set, { from: OUTSIDER, to: address, destinationTag: 2 })).toMatchObject({ externalUserId: 'dave' });
    expect(attribute(set, { from: OUTSIDER, to: address, destinationTag: null })).toBeNull();
    expect(attribute(set, { from: OUTSIDER, to: address, destinationTag: 3 })).toBeNull();
    expect(attribute(set, { from: OUTSIDER, to: 'rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe', destinationTag: 1 })).toBeUndefined();
    expect([...watchedAddresses(set)]).toEqual([address]);
  });
});

describe('the service’s own wallets', () => {
  it('a transfer from an organization wallet (a sweep’s gas top-up) is no deposit, whatever the case of the address', () => {
    const set = emptyWatchSet('evm');
    addAccount(set, { orgId: ORG, chainId: 'eip155:1', externalUserId: 'alice', properties: { address: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94' } });
    addServiceWallet(set, '0x6Fac4D18c912343BF86fa7049364Dd4E424Ab9C0');
    const deposit = { to: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94', destinationTag: null };
    expect(attribute(set, { ...deposit, from: '0x6fac4d18c912343bf86fa7049364dd4e424ab9c0' })).toBeUndefined();
    expect(attribute(set, { ...deposit, from: '0x000000000000000000000000000000000000dEaD' })).toMatchObject({ externalUserId: 'alice' });
  });
});

describe('unconfirmed deposits', () => {
  const ref = (n: number) => ({ chainId: 'eip155:1', txHash: `0x${n}`, index: 0 });
  const detected = (n: number, blockNumber: number, blockHash = `h${blockNumber}`) =>
    ({ type: 'DepositDetected', data: { ...ref(n), blockNumber, blockHash } }) as const;

  it('holds what is detected and neither confirmed nor reverted; a deposit detected again after a revert is back', () => {
    const deposits: UnconfirmedDeposits = new Map();
    applyDepositEvent(deposits, detected(1, 10));
    applyDepositEvent(deposits, detected(2, 11));
    applyDepositEvent(deposits, detected(3, 12));
    applyDepositEvent(deposits, { type: 'DepositConfirmed', data: ref(1) });
    applyDepositEvent(deposits, { type: 'DepositReverted', data: ref(2) });
    expect([...deposits.values()].map((deposit) => deposit.ref.txHash)).toEqual(['0x3']);
    applyDepositEvent(deposits, detected(2, 14, 'h14b'));
    expect(deposits.get('eip155:1:0x2:0')).toEqual({ ref: ref(2), blockNumber: 14, blockHash: 'h14b' });
  });

  it('is due at exactly head − block + 1 ≥ required, oldest first; abandoned above a fork point; superseded at a height', () => {
    const deposits: UnconfirmedDeposits = new Map();
    applyDepositEvent(deposits, detected(2, 20));
    applyDepositEvent(deposits, detected(1, 15));
    applyDepositEvent(deposits, detected(3, 21));
    expect(dueForConfirmation(deposits, 25, 6).map((deposit) => deposit.blockNumber)).toEqual([15, 20]);
    expect(dueForConfirmation(deposits, 24, 6).map((deposit) => deposit.blockNumber)).toEqual([15]);
    expect(abandonedAbove(deposits, 20).map((deposit) => deposit.blockNumber)).toEqual([21]);
    expect(supersededAt(deposits, 20, 'h20')).toEqual([]);
    expect(supersededAt(deposits, 20, 'other').map((deposit) => deposit.ref.txHash)).toEqual(['0x2']);
  });
});

describe('fork point', () => {
  const remembered = [
    { number: 12, hash: 'a12' },
    { number: 11, hash: 'a11' },
    { number: 10, hash: 'a10' },
  ];

  it('is the newest remembered block the chain still has', async () => {
    const canonical: Record<number, string> = { 10: 'a10', 11: 'b11', 12: 'b12' };
    expect(await findForkPoint(remembered, async (number) => canonical[number] ?? null)).toBe(10);
    expect(await findForkPoint(remembered, async (number) => (number === 12 ? null : `a${number}`))).toBe(11);
  });

  it('is null when the reorg is deeper than what is remembered', async () => {
    expect(await findForkPoint(remembered, async (number) => `b${number}`)).toBeNull();
  });
});
