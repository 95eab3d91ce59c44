import type { ChainDefinition, DecodedTransfer } from '../catalog/chain.js';

/**
 * What the service asks of a chain: the devnet implements it now, real node gateways (ethers,
 * Bitcoin, Tron, XRP clients) implement the same interface later. Watchers follow blocks and pick
 * out transfers to deposit addresses; the withdrawal processor and sweeps estimate fees, broadcast
 * signed transactions and follow their status. Amounts are bigint base units.
 */
export interface BlockHeader {
  number: number;
  hash: string;
  parentHash: string;
  /** ISO 8601 UTC */
  timestamp: string;
}

export interface BlockTransfer extends DecodedTransfer {
  txHash: string;
  blockNumber: number;
  blockHash: string;
}

export type TransactionStatus =
  | { status: 'not_found' }
  | { status: 'pending' }
  | { status: 'confirmed'; blockNumber: number; blockHash: string; confirmations: number; fee: bigint }
  | { status: 'failed'; blockNumber: number | null; error: string; fee: bigint };

export interface FeeEstimate {
  /** what one transfer of that asset costs, in native base units, at the current price */
  fee: bigint;
  /** family-specific inputs the signer uses: EVM maxFeePerGas/maxPriorityFeePerGas/gasLimit, Bitcoin sat/vB, Tron feeLimit, XRP drops */
  parameters: Record<string, string>;
}

export interface UnspentOutput {
  txHash: string;
  index: number;
  address: string;
  amount: bigint;
  /** confirmations of the transaction that made it (0: in the mempool or the head block's… not yet mined) */
  confirmations: number;
}

export class BroadcastRejectedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BroadcastRejectedError';
  }
}

/**
 * Why a transaction is sent. Only a withdrawal's own transaction meets the devnet's faults
 * (CONTRACT §8); absent means a service transaction that is not a withdrawal. Node gateways ignore it.
 */
export type BroadcastPurpose = 'withdrawal' | 'sweep' | 'gas-top-up';

export interface ChainGateway {
  readonly chain: ChainDefinition;
  /** the newest block */
  head(): Promise<BlockHeader>;
  /** a block of the current canonical chain; null past the head */
  block(number: number): Promise<BlockHeader | null>;
  /** the transfers in a canonical block to any of these addresses (all transfers when omitted) */
  transfersInBlock(number: number, toAddresses?: ReadonlySet<string>): Promise<BlockTransfer[]>;
  /** confirmed balance of an address, native ('native') or a token contract */
  balance(address: string, asset: string): Promise<bigint>;
  /** EVM nonce / XRP sequence the next transaction of this account must carry (pending ones counted) */
  nextNonce(address: string): Promise<number>;
  /** Bitcoin: the unspent outputs of these addresses */
  unspentOutputs(addresses: readonly string[]): Promise<UnspentOutput[]>;
  /** XRP: whether the account requires a destination tag (RequireDest) */
  requiresDestinationTag(address: string): Promise<boolean>;
  estimateFee(request: { from: string; to: string; asset: string; amount: bigint }): Promise<FeeEstimate>;
  /** sends a signed transaction; returns its hash (the same hash again for a transaction already known); BroadcastRejectedError when the node refuses it */
  broadcast(rawTransaction: string, options?: { purpose?: BroadcastPurpose }): Promise<{ txHash: string }>;
  transactionStatus(txHash: string): Promise<TransactionStatus>;
}
