import ecc from '@bitcoinerlab/secp256k1';
import { TronWeb, utils } from 'tronweb';
import { receivePublicKey } from '../xpub.js';
import type { AddressCodec } from '../../catalog/chain.js';

/** BIP44 coin type 195'. Shasta uses mainnet's address format, so both networks share one key tree. */
const ACCOUNT_PATH = "m/44'/195'/0'";

/** 0x41 followed by the 20-byte account id, as base58check: always 34 characters starting with T. */
const BASE58_ADDRESS = /^T[1-9A-HJ-NP-Za-km-z]{33}$/;

/**
 * Base58check (T…) addresses only. tronweb's `isAddress` also accepts the 41… hex form, but a
 * recipient typed by a person should be the form wallets show, whose checksum catches typos.
 */
export const isTronAddress = (address: string): boolean => {
  if (!BASE58_ADDRESS.test(address)) return false;
  try {
    return utils.crypto.isAddressValid(address);
  } catch {
    return false;
  }
};

/** The 41… hex form (lowercase) that Tron's protobuf messages carry. */
export const tronAddressToHex = (address: string): string => {
  if (!isTronAddress(address)) throw new Error(`not a Tron address: ${address}`);
  return TronWeb.address.toHex(address).toLowerCase();
};

/** The base58check (T…) form of a 41… hex address. */
export const tronAddressFromHex = (hex: string): string => {
  if (!/^41[0-9a-fA-F]{40}$/.test(hex)) throw new Error(`not a Tron hex address: ${hex}`);
  return TronWeb.address.fromHex(hex.toLowerCase());
};

/** keccak256 of the uncompressed key, its last 20 bytes behind 0x41, base58check (tronweb's own encoding). */
export const tronAddressFromPublicKey = (publicKey: Uint8Array): string => {
  if (publicKey.length !== 33 && publicKey.length !== 65) throw new Error('a secp256k1 public key has 33 or 65 bytes');
  const uncompressed = ecc.pointCompress(publicKey, false);
  return utils.crypto.getBase58CheckAddress(utils.crypto.computeAddress(uncompressed));
};


export const tronAddresses: AddressCodec = {
  family: 'tron',
  accountPath: () => ACCOUNT_PATH,
  deriveAddress: (accountXpub, index) => tronAddressFromPublicKey(receivePublicKey(accountXpub, index)),
  addressFromPublicKey: (publicKey) => tronAddressFromPublicKey(publicKey),
  isValidAddress: (address) => isTronAddress(address),
};
