import type { DepositOwner } from '../../application/deposits.js';
import type { ChainFamily } from '../../catalog/chain.js';

/** What an AccountCreated event tells a watcher (src/domain/account). */
export interface AccountOpened {
  orgId: string;
  chainId: string;
  externalUserId: string;
  properties: { address: string; destinationTag?: string };
}

/**
 * The deposit addresses of one chain and who owns them. On XRP every user of an organization
 * shares the organization's address and is told apart by destination tag, so the set also knows
 * the organization addresses: a payment there without a known tag is still ours, but nobody's.
 */
export interface WatchSet {
  family: ChainFamily;
  /** address key → owner (chains without destination tags) */
  byAddress: Map<string, DepositOwner>;
  /** `${address key}#${tag}` → owner (XRP) */
  byTaggedAddress: Map<string, DepositOwner>;
  /** address key → the address as handed out (what the gateway is asked about) */
  addresses: Map<string, string>;
  /**
   * address keys of the organizations' own settlement and gas wallets: what they send to a deposit
   * address (a sweep's gas top-up) is the service moving its own money, never a deposit
   */
  serviceWallets: Set<string>;
}

/** Where a transfer belongs: an owner, ours but unattributed (null), or not ours at all (undefined). */
export type Attribution = DepositOwner | null | undefined;

/**
 * EVM addresses compare case-insensitively (EIP-55 is only a checksum), bech32 is case-insensitive
 * too; Tron's base58 and XRP's classic addresses are case-sensitive.
 */
export const addressKey = (family: ChainFamily, address: string): string =>
  family === 'evm' || family === 'bitcoin' ? address.toLowerCase() : address;

export const emptyWatchSet = (family: ChainFamily): WatchSet => ({ family, byAddress: new Map(), byTaggedAddress: new Map(), addresses: new Map(), serviceWallets: new Set() });

/** Where an account sits in the set: its address key, or `${address key}#${tag}` on XRP. */
export const accountEntryKey = (family: ChainFamily, account: AccountOpened): string => {
  const key = addressKey(family, account.properties.address);
  const tag = account.properties.destinationTag;
  return tag === undefined ? key : `${key}#${tag}`;
};

/** Adds an account of the set's chain (the caller filters by chain); mutates for speed, the set is the watcher's own. */
export const addAccount = (set: WatchSet, account: AccountOpened): void => {
  const owner: DepositOwner = { orgId: account.orgId, externalUserId: account.externalUserId, accountChainId: account.chainId };
  set.addresses.set(addressKey(set.family, account.properties.address), account.properties.address);
  const entryKey = accountEntryKey(set.family, account);
  if (account.properties.destinationTag === undefined) set.byAddress.set(entryKey, owner);
  else set.byTaggedAddress.set(entryKey, owner);
};

/** Adds one of the service's own wallets on the set's chain. */
export const addServiceWallet = (set: WatchSet, address: string): void => {
  set.serviceWallets.add(addressKey(set.family, address));
};

/**
 * The addresses to ask the gateway about, as handed out: a live view of the set, not a copy, so a
 * block costs the same however many addresses were ever handed out (the set only grows).
 */
class HandedOutAddresses implements ReadonlySet<string> {
  constructor(private readonly set: WatchSet) {}

  get size(): number {
    return this.set.addresses.size;
  }

  has(address: string): boolean {
    return this.set.addresses.get(addressKey(this.set.family, address)) === address;
  }

  values(): SetIterator<string> {
    return this.set.addresses.values();
  }

  keys(): SetIterator<string> {
    return this.values();
  }

  *entries(): SetIterator<[string, string]> {
    for (const address of this.values()) yield [address, address];
  }

  forEach(callback: (value: string, key: string, set: ReadonlySet<string>) => void, thisArg?: unknown): void {
    for (const address of this.values()) callback.call(thisArg, address, address, this);
  }

  [Symbol.iterator](): SetIterator<string> {
    return this.values();
  }
}

export const watchedAddresses = (set: WatchSet): ReadonlySet<string> => new HandedOutAddresses(set);

export const attribute = (set: WatchSet, transfer: { from: string; to: string; destinationTag: number | null }): Attribution => {
  const key = addressKey(set.family, transfer.to);
  if (!set.addresses.has(key)) return undefined;
  if (set.serviceWallets.has(addressKey(set.family, transfer.from))) return undefined;
  const direct = set.byAddress.get(key);
  if (direct) return direct;
  // an organization address (XRP): the tag names the user; a missing or unknown tag names nobody
  if (transfer.destinationTag === null) return null;
  return set.byTaggedAddress.get(`${key}#${transfer.destinationTag}`) ?? null;
};
