/** The four chain families ledgergate speaks; each has one folder under src/chains. */
export type ChainFamily = 'evm' | 'bitcoin' | 'tron' | 'xrp';

/** Within a family, the network decides address formats and key paths (Bitcoin's bc1/tb1, coin type 0'/1'). */
export type ChainNetwork = 'mainnet' | 'testnet';

/** SPEC §2.5's chain, plus what the code needs to talk to it. */
export interface ChainDefinition {
  /** CAIP-2 */
  id: string;
  name: string;
  namespace: 'eip155' | 'bip122' | 'tron' | 'xrpl';
  reference: string;
  isTestnet: boolean;
  family: ChainFamily;
  network: ChainNetwork;
  /** EIP-155 chain id (EVM only): signed transactions carry it */
  evmChainId?: number;
  properties: {
    nativeCurrency: string;
    decimals: number;
    /** blocks after the including one before deposit.confirmed (CONTRACT §6) */
    confirmations: number;
  };
  /**
   * Deposit addresses of chains in one key space come from one key tree and one index counter:
   * every EVM chain shares one (a user has one EVM address), Tron's two networks share one, each
   * Bitcoin network has its own (coin type 0' or 1'), XRP's networks share one.
   */
  keySpace: string;
}

/** Addresses of one family: derivation from account-level extended public keys, and validation. */
export interface AddressCodec {
  family: ChainFamily;
  /** the hardened, account-level BIP32 path whose xpub the service holds, e.g. "m/44'/60'/0'" */
  accountPath(network: ChainNetwork): string;
  /** the address of the receive child 0/index under an account-level extended public key */
  deriveAddress(accountXpub: string, index: number, network: ChainNetwork): string;
  /** the address of a (compressed, 33-byte) secp256k1 public key */
  addressFromPublicKey(publicKey: Uint8Array, network: ChainNetwork): string;
  /** whether a recipient address is valid on that network (EIP-55 when mixed case, bech32/bech32m/base58 by network, …) */
  isValidAddress(address: string, network: ChainNetwork): boolean;
}

/** One transfer inside a transaction, as a node (or the devnet) reports it. */
export interface DecodedTransfer {
  /**
   * output index (Bitcoin), the log's index within its transaction (token transfers: the same
   * wherever the transaction is mined) or 0 (a native transfer on an account chain)
   */
  index: number;
  from: string;
  to: string;
  /** 'native', or the token contract address (EVM: lowercase 0x…; Tron: base58 T…) */
  asset: string;
  amount: bigint;
  /** XRP only */
  destinationTag: number | null;
}

/** A signed transaction, decoded and its signature(s) verified by the family library. */
export interface DecodedTransaction {
  hash: string;
  /** the account that signed (account chains); Bitcoin: the address of the first input */
  from: string;
  transfers: DecodedTransfer[];
  /** what the sender pays the network, in the native asset's base units, as far as the raw transaction states it */
  fee: bigint;
  /** EVM nonce / XRP sequence; null where the family has none */
  nonce: number | null;
  /** Bitcoin: the outputs it spends */
  spends: { txHash: string; index: number }[];
}

/** Bitcoin needs the outputs a transaction spends to verify its signatures. */
export interface PreviousOutput {
  address: string;
  amount: bigint;
}

export interface DecodeContext {
  chain: ChainDefinition;
  previousOutput?(txHash: string, index: number): PreviousOutput | undefined;
}

export class InvalidTransactionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidTransactionError';
  }
}

/** Decoding and verification of the family's signed transactions (the devnet's node, and tests). */
export interface TransactionCodec {
  family: ChainFamily;
  /** throws InvalidTransactionError when malformed, for another network, or a signature does not verify */
  decodeSignedTransaction(raw: string, context: DecodeContext): DecodedTransaction;
  /**
   * The hash of a signed transaction without verifying it, where the family can take it from the
   * bytes more cheaply than a decoding (which recovers the signer); absent: the decoding's hash.
   */
  hashOfSigned?(raw: string): string;
}
