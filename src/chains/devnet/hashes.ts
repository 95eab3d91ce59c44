import { createHash } from 'node:crypto';
import { getAddress } from 'ethers';
import { isValidXAddress, xAddressToClassicAddress } from 'xrpl';
import type { ChainDefinition, ChainFamily } from '../../catalog/chain.js';

const sha256Hex = (...parts: string[]) => createHash('sha256').update(parts.join('\n')).digest('hex');

/** A 32-byte hash in the family's notation: 0x-prefixed on EVM, bare lowercase hex elsewhere. */
const inFamilyFormat = (family: ChainFamily, hex: string) => (family === 'evm' ? `0x${hex}` : family === 'xrp' ? hex.toUpperCase() : hex);

export interface BlockContents {
  number: number;
  parentHash: string;
  timestamp: Date;
  transactionHashes: readonly string[];
  /** the chain's reorg count: a replaced block of the same height and contents gets another hash */
  salt: number;
}

/** A block's hash, derived from its contents (deterministic: the same inputs give the same hash). */
export const blockHash = (chain: ChainDefinition, block: BlockContents): string =>
  inFamilyFormat(
    chain.family,
    sha256Hex('devnet-block', chain.id, String(block.number), block.parentHash, block.timestamp.toISOString(), String(block.salt), ...block.transactionHashes),
  );

export const genesisParentHash = (chain: ChainDefinition): string => inFamilyFormat(chain.family, '0'.repeat(64));

/** The hash of a transaction the devnet makes itself (a credit, an external deposit): unique by its counter. */
export const syntheticTransactionHash = (chain: ChainDefinition, kind: string, counter: number): string =>
  inFamilyFormat(chain.family, sha256Hex('devnet-transaction', chain.id, kind, String(counter)));

/**
 * One spelling per address, so that lookups and sums match however a caller wrote it: EIP-55 on
 * EVM, lowercase bech32 on Bitcoin; Tron's base58 and XRP's classic addresses are case-sensitive.
 */
export const canonicalAddress = (family: ChainFamily, address: string): string => {
  const key = addressMatchKey(family, address);
  return family === 'evm' && /^0x[0-9a-f]{40}$/.test(key) ? getAddress(key) : key;
};

/**
 * What two spellings of an address share exactly when their canonical forms are equal, without the
 * EIP-55 checksum (a hash per address): a hex EVM address in lowercase, the rest as canonical.
 * A block's transfers are matched against every watched address by it.
 */
export const addressMatchKey = (family: ChainFamily, address: string): string => {
  if (family === 'evm' && /^0x[0-9a-fA-F]{40}$/.test(address)) return address.toLowerCase();
  if (family === 'bitcoin' && /^(bc|tb|bcrt)1/i.test(address)) return address.toLowerCase();
  // an X-address names the account and a tag: the account is its classic address
  if (family === 'xrp' && isValidXAddress(address)) return xAddressToClassicAddress(address).classicAddress;
  return address;
};

/** Assets as DecodedTransfer names them: 'native', an EVM contract in lowercase, a Tron contract as it is. */
export const canonicalAsset = (family: ChainFamily, asset: string): string => (family === 'evm' && asset !== 'native' ? asset.toLowerCase() : asset);

/** Transaction hashes as each family writes them: XRPL in uppercase hex, the others in lowercase. */
export const canonicalTransactionHash = (family: ChainFamily, hash: string): string => (family === 'xrp' ? hash.toUpperCase() : hash.toLowerCase());
