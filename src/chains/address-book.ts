import type { DepositAddressBook } from '../application/deposit-accounts.js';
import type { ChainDefinition } from './chain.js';
import { addressCodecs } from './families.js';
import { findChain } from './registry.js';
import type { Signer } from './signer/signer.js';

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
