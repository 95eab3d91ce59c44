import { bitcoinAddresses } from './bitcoin/address.js';
import { bitcoinTransactions } from './bitcoin/transactions.js';
import type { AddressCodec, ChainDefinition, ChainFamily, TransactionCodec } from '../catalog/chain.js';
import { evmAddresses } from './evm/address.js';
import { evmTransactions } from './evm/transactions.js';
import { tronAddresses } from './tron/address.js';
import { tronTransactions } from './tron/transactions.js';
import { xrpAddresses } from './xrp/address.js';
import { xrpTransactions } from './xrp/transactions.js';

/** Each family's address codec: derivation from xpubs and recipient validation. */
export const addressCodecs: Record<ChainFamily, AddressCodec> = {
  evm: evmAddresses,
  bitcoin: bitcoinAddresses,
  tron: tronAddresses,
  xrp: xrpAddresses,
};

/** Each family's signed-transaction decoder and verifier (the devnet's node, and tests). */
export const transactionCodecs: Record<ChainFamily, TransactionCodec> = {
  evm: evmTransactions,
  bitcoin: bitcoinTransactions,
  tron: tronTransactions,
  xrp: xrpTransactions,
};

/** The hash of a transaction the service has just signed: from its bytes where the family can, else from its decoding. */
export const signedTransactionHash = (chain: ChainDefinition, raw: string): string => {
  const codec = transactionCodecs[chain.family];
  return codec.hashOfSigned ? codec.hashOfSigned(raw) : codec.decodeSignedTransaction(raw, { chain }).hash;
};
