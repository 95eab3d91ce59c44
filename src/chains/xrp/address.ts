import { deriveAddress, isValidClassicAddress, isValidXAddress, xAddressToClassicAddress } from 'xrpl';
import { receivePublicKey } from '../xpub.js';
import type { AddressCodec, ChainNetwork } from '../../catalog/chain.js';

/** BIP44 coin type 144' (what xrpl's Wallet.fromMnemonic uses). XRPL testnet addresses look like mainnet's, so one tree serves both. */
const ACCOUNT_PATH = "m/44'/144'/0'";

/** An XRPL recipient: the account, and the destination tag an X-address carries (CONTRACT §6). */
export interface XrpRecipient {
  classicAddress: string;
  tag: number | null;
}

/**
 * An X-address states whether it is for a test network; sending a mainnet X-address's funds on
 * testnet (or the reverse) is what the flag exists to prevent, so each network takes only its own.
 */
const xAddressForNetwork = (address: string, network: ChainNetwork) => {
  if (!isValidXAddress(address)) return null;
  const decoded = xAddressToClassicAddress(address);
  return decoded.test === (network === 'testnet') ? decoded : null;
};

export const isXrpAddress = (address: string, network: ChainNetwork): boolean =>
  isValidClassicAddress(address) || xAddressForNetwork(address, network) !== null;

/** The account and tag to pay; throws when `address` is not an XRP address valid on `network`. */
export const parseXrpRecipient = (address: string, network: ChainNetwork): XrpRecipient => {
  if (isValidClassicAddress(address)) return { classicAddress: address, tag: null };
  const decoded = xAddressForNetwork(address, network);
  if (!decoded) throw new Error(`not an XRP address on ${network}: ${address}`);
  return { classicAddress: decoded.classicAddress, tag: decoded.tag === false ? null : decoded.tag };
};

/** The classic address of a compressed secp256k1 key (ripple-keypairs' deriveAddress over its hex). */
export const xrpAddressFromPublicKey = (publicKey: Uint8Array): string => {
  if (publicKey.length !== 33 || (publicKey[0] !== 0x02 && publicKey[0] !== 0x03)) {
    throw new Error('expected a compressed (33-byte) secp256k1 public key');
  }
  return deriveAddress(Buffer.from(publicKey).toString('hex').toUpperCase());
};


export const xrpAddresses: AddressCodec = {
  family: 'xrp',
  accountPath: () => ACCOUNT_PATH,
  deriveAddress: (accountXpub, index) => xrpAddressFromPublicKey(receivePublicKey(accountXpub, index)),
  addressFromPublicKey: (publicKey) => xrpAddressFromPublicKey(publicKey),
  isValidAddress: (address, network) => isXrpAddress(address, network),
};
