import ecc from '@bitcoinerlab/secp256k1';
import { BIP32Factory } from 'bip32';
import { mnemonicToSeedSync } from 'bip39';
import type { ChainDefinition } from '../../catalog/chain.js';
import { addressCodecs } from '../families.js';

const bip32 = BIP32Factory(ecc);

/**
 * The devnet faucet's keys come from this fixed, public mnemonic (the one anvil and hardhat use):
 * it is not a secret and never a key of the service. The faucet signs the devnet's deposits so they
 * are real transactions of the family, verified and decoded like any broadcast.
 */
export const DEVNET_FAUCET_MNEMONIC = 'test test test test test test test test test test test junk';

export interface FaucetKey {
  address: string;
  privateKey: Uint8Array;
}

const root = bip32.fromSeed(mnemonicToSeedSync(DEVNET_FAUCET_MNEMONIC));
const cache = new Map<string, FaucetKey>();

/** The faucet's key on a chain: receive child 0/0 of the family's account path on that network. */
export const faucetKey = (chain: ChainDefinition): FaucetKey => {
  const id = `${chain.family}:${chain.network}`;
  let key = cache.get(id);
  if (!key) {
    const node = root.derivePath(addressCodecs[chain.family].accountPath(chain.network)).derive(0).derive(0);
    if (!node.privateKey) throw new Error('the faucet node has no private key');
    key = { address: addressCodecs[chain.family].addressFromPublicKey(node.publicKey, chain.network), privateKey: node.privateKey };
    cache.set(id, key);
  }
  return key;
};
