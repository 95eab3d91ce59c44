import { computeAddress, getAddress, hexlify } from 'ethers';
import type { AddressCodec } from '../../catalog/chain.js';
import { receivePublicKey } from '../xpub.js';

/** BIP44 coin type 60: one account for every EVM chain and network (a user has one EVM address). */
const ACCOUNT_PATH = "m/44'/60'/0'";

const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

export const evmAddresses: AddressCodec = {
  family: 'evm',
  accountPath: () => ACCOUNT_PATH,
  deriveAddress: (accountXpub, index) => computeAddress(hexlify(receivePublicKey(accountXpub, index))),
  addressFromPublicKey: (publicKey) => computeAddress(hexlify(publicKey)),
  isValidAddress: (address) => {
    if (!HEX_ADDRESS.test(address)) return false;
    const hex = address.slice(2);
    // EIP-55: a single-case address carries no checksum; a mixed-case one must match it exactly.
    if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) return true;
    return getAddress(address.toLowerCase()) === address;
  },
};
