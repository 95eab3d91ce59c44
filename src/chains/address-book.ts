import type { ChainDefinition } from '../catalog/chain.js';
import { addressCodecs } from './families.js';
import { findChain } from '../catalog/registry.js';
import type { Signer } from './signer/signer.js';

/**
 * What the chain layer tells deposit accounts: which key space a chain's addresses come from, and
 * the address at an index. Only extended public keys stand behind it (ARCHITECTURE invariant 10).
 */
export interface DepositAddressBook {
  /** EVM chains share one space (a user has one EVM address); each Bitcoin network has its own */
  keySpace(chainId: string): string;
  addressAt(chainId: string, index: number): string;
  /** XRP: one organization address per chain, users told apart by destination tag */
  usesDestinationTags(chainId: string): boolean;
}

const chainOf = (chainId: string): ChainDefinition => {
  const chain = findChain(chainId);
  if (!chain) throw new Error(`no chain ${chainId}`); // callers validate the chain id first
  return chain;
};

/**
 * Deposit addresses from account-level extended public keys only (ARCHITECTURE invariant 10): the
 * signer is asked for xpubs, never for a key, and each family's codec derives child 0/index.
 */
export const createDepositAddressBook = (signer: Pick<Signer, 'accountXpub'>): DepositAddressBook => ({
  keySpace: (chainId) => chainOf(chainId).keySpace,
  addressAt: (chainId, index) => {
    const chain = chainOf(chainId);
    return addressCodecs[chain.family].deriveAddress(signer.accountXpub(chain.family, chain.network), index, chain.network);
  },
  usesDestinationTags: (chainId) => chainOf(chainId).family === 'xrp',
});
