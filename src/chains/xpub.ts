import ecc from '@bitcoinerlab/secp256k1';
import { BIP32Factory } from 'bip32';

const bip32 = BIP32Factory(ecc);

const RECEIVE_BRANCH = 0;
const HARDENED_OFFSET = 0x80000000;

/**
 * The public key of receive child 0/index under an account-level extended public key, for every
 * family: the signer serializes each account xpub with bitcoin mainnet version bytes ("xpub…"),
 * so one parser serves them all, and the family only encodes the key as its address.
 */
export const receivePublicKey = (accountXpub: string, index: number): Uint8Array => {
  if (!Number.isInteger(index) || index < 0 || index >= HARDENED_OFFSET) throw new RangeError(`receive index out of range: ${index}`);
  const account = bip32.fromBase58(accountXpub);
  // an xprv here would mean private key material outside the signer: refuse it
  if (!account.isNeutered()) throw new Error('expected an extended public key, got a private one');
  return account.derive(RECEIVE_BRANCH).derive(index).publicKey;
};
