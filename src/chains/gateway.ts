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
  /** mined and failed on chain (reverted, tec*): final only once `confirmations` reach the chain's depth, like success */
  | { status: 'failed'; blockNumber: number | null; error: string; fee: bigint; confirmations: number };

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

/**
 * How a node's refusal of a signed transaction is read. None of them is proof that the payment can
 * never happen (another node may hold the bytes, funds may arrive, a fee market may fall): only the
 * chain at depth proves that (`ChainGateway.provablyNever`).
 * - `transient`: the same bytes may be taken later as they are (a fee below today's market, a full
 *   mempool, a node busy or behind): keep following and re-send them.
 * - `conflict`: what the transaction spends is taken (its nonce or sequence, an input), by it or by
 *   another transaction: keep following until the chain says which, at depth.
 * - `invalid`: the node refuses the transaction on its own merits now (funds, signature, form): to
 *   end it, it must first be made impossible (its nonce or an input spent by a transaction of ours
 *   that pays nobody), or left to expire.
 */
export type BroadcastRefusal = 'transient' | 'conflict' | 'invalid';

export class BroadcastRejectedError extends Error {
  constructor(
    message: string,
    readonly refusal: BroadcastRefusal = 'invalid',
  ) {
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
  /**
   * confirmed balance of an address, native ('native') or a token contract. `recentMs`: an answer
   * read at most that long ago will do, where the gateway keeps one (a gateway that keeps none reads anew)
   */
  balance(address: string, asset: string, options?: { recentMs?: number }): Promise<bigint>;
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
  /**
   * For a signed transaction the chain does not hold: the proof, when there is one, that it can
   * never be mined (EVM: its nonce taken by another transaction at the chain's depth; Bitcoin: an
   * input spent by another transaction at depth; XRP: the validated ledger past its
   * LastLedgerSequence, or its sequence taken; Tron: its expiration passed at depth). null: it can
   * still happen.
   */
  provablyNever(rawTransaction: string): Promise<string | null>;
}
