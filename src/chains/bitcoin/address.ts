import ecc from '@bitcoinerlab/secp256k1';
import { address, initEccLib, networks, payments, type Network } from 'bitcoinjs-lib';
import type { AddressCodec, ChainNetwork } from '../../catalog/chain.js';
import { receivePublicKey } from '../xpub.js';

// bitcoinjs needs a secp256k1 backend for taproot (bech32m) outputs and PSBT signing.
initEccLib(ecc);

export const bitcoinNetwork = (network: ChainNetwork): Network => (network === 'mainnet' ? networks.bitcoin : networks.testnet);

/** The P2WPKH address of a compressed public key. */
export const p2wpkhAddress = (publicKey: Uint8Array, network: ChainNetwork): string => {
  const encoded = payments.p2wpkh({ pubkey: publicKey, network: bitcoinNetwork(network) }).address;
  if (!encoded) throw new Error('no P2WPKH address for this public key');
  return encoded;
};

/** The output script an address pays to on that network; undefined when it is no address of that network. */
export const outputScriptOf = (recipient: string, network: ChainNetwork): Uint8Array | undefined => {
  try {
    return address.toOutputScript(recipient, bitcoinNetwork(network));
  } catch {
    return undefined;
  }
};

/** The address an output script pays on that network; undefined for scripts that pay no address (OP_RETURN, bare scripts). */
export const addressOfOutputScript = (script: Uint8Array, network: ChainNetwork): string | undefined => {
  try {
    return address.fromOutputScript(script, bitcoinNetwork(network));
  } catch {
    return undefined;
  }
};

/** BIP84 native segwit: coin type 0' on mainnet, 1' on testnet. */
export const bitcoinAddresses: AddressCodec = {
  family: 'bitcoin',
  accountPath: (network) => (network === 'mainnet' ? "m/84'/0'/0'" : "m/84'/1'/0'"),
  // testnet's xpub too has mainnet version bytes (see receivePublicKey): the network only decides bc1/tb1
  deriveAddress: (accountXpub, index, network) => p2wpkhAddress(receivePublicKey(accountXpub, index), network),
  addressFromPublicKey: p2wpkhAddress,
  // bitcoinjs checks the checksum, bech32 for v0 and bech32m for v1+, and the network's HRP / base58 versions
  isValidAddress: (recipient, network) => outputScriptOf(recipient, network) !== undefined,
};
