import { AbiCoder, getAddress, id, toBeHex, toQuantity, Transaction, zeroPadValue } from 'ethers';
import type { Logger } from '../../log.js';
import type { ChainDefinition } from '../../catalog/chain.js';
import type { ChainSettings, EvmFeePolicy } from '../config.js';
import { BroadcastRejectedError, type BlockHeader, type BlockTransfer, type ChainGateway, type TransactionStatus } from '../gateway.js';
import { TOKENS } from '../../catalog/tokens.js';
import { DEFAULT_TOKEN_TRANSFER_GAS, eip1559Estimate, gasLimitFromEstimate, NATIVE_TRANSFER_GAS } from './fees.js';
import { createNonceTracker } from './nonces.js';
import { createEvmRpc, NodeAnswerError, type EvmRpc } from './rpc.js';
import { classifyEvmAnswer } from './broadcast-answers.js';
import { inParallel } from '../../lib/in-parallel.js';

/** The node's JSON (hex quantities), only the fields read here. */
interface RpcTransaction {
  hash: string;
  from: string;
  to: string | null;
  value: string;
  blockNumber: string | null;
}
interface RpcBlock {
  number: string;
  hash: string;
  parentHash: string;
  timestamp: string;
  baseFeePerGas?: string;
  transactions: RpcTransaction[] | string[];
}
interface RpcLog {
  address: string;
  topics: string[];
  data: string;
  transactionHash: string;
  blockHash: string;
  logIndex: string;
  removed?: boolean;
}
interface RpcReceipt {
  status: string;
  blockNumber: string;
  blockHash: string;
  gasUsed: string;
  effectiveGasPrice: string;
  logs?: { logIndex: string }[];
}

const TRANSFER_TOPIC = id('Transfer(address,address,uint256)');
const BALANCE_OF = id('balanceOf(address)').slice(0, 10);
const TRANSFER = id('transfer(address,uint256)').slice(0, 10);
const abi = AbiCoder.defaultAbiCoder();
/** receipts asked for at once while placing a block's deposit logs in their transactions */
const RECEIPTS_IN_FLIGHT = 8;
/** above this many watched addresses, logs are fetched for the whole block and filtered here (a node caps topic lists) */
const MAX_TOPIC_ADDRESSES = 100;

const toHeader = (block: RpcBlock): BlockHeader => ({
  number: Number(block.number),
  hash: block.hash,
  parentHash: block.parentHash,
  timestamp: new Date(Number(block.timestamp) * 1000).toISOString(),
});

const addressTopic = (address: string) => zeroPadValue(address.toLowerCase(), 32);
const topicAddress = (topic: string) => getAddress('0x' + topic.slice(-40));

/** "already known" and its variants: the node has these bytes, so the broadcast has happened */

/**
 * A ChainGateway over an EVM node's JSON-RPC (ethers JsonRpcProvider, no response cache: every
 * block hash is the node's current answer, which is what reorg detection compares). Deposits are
 * native value sent by a successful transaction straight to a watched address (value moved by a
 * contract's internal call is not seen) and `Transfer` logs of the catalog's ERC-20 contracts.
 */
export const createEvmGateway = (chain: ChainDefinition, settings: Pick<ChainSettings, 'rpcUrls' | 'rpcTimeoutMs' | 'fees'>, rpc: EvmRpc = evmRpcFor(chain, settings)): ChainGateway & { close(): void } => {
  if (chain.family !== 'evm' || chain.evmChainId === undefined) throw new Error(`${chain.id} is not an EVM chain`);
  const policy = settings.fees as EvmFeePolicy | undefined;
  const tokenContracts = TOKENS.filter((token) => token.chainId === chain.id && token.kind === 'erc20').map((token) => token.address.toLowerCase());
  const nonces = createNonceTracker();

  const blockAt = (tag: number | 'latest', withTransactions: boolean) => rpc.send<RpcBlock | null>('eth_getBlockByNumber', [tag === 'latest' ? tag : toQuantity(tag), withTransactions]);
  const headNumber = async () => Number(await rpc.send<string>('eth_blockNumber', []));
  const receipt = (txHash: string) => rpc.send<RpcReceipt | null>('eth_getTransactionReceipt', [txHash]);

  const nativeTransfers = async (block: RpcBlock, wanted: Set<string> | null): Promise<BlockTransfer[]> => {
    const candidates = (block.transactions as RpcTransaction[]).filter(
      (tx) => tx.to !== null && BigInt(tx.value) > 0n && (wanted === null || wanted.has(tx.to.toLowerCase())),
    );
    const transfers: BlockTransfer[] = [];
    for (const tx of candidates) {
      // a reverted transaction moves no value, though its `value` field says otherwise
      const outcome = await receipt(tx.hash);
      if (outcome?.status !== '0x1' || outcome.blockHash !== block.hash) continue;
      transfers.push({ txHash: tx.hash, blockNumber: Number(block.number), blockHash: block.hash, index: 0, from: getAddress(tx.from), to: getAddress(tx.to!), asset: 'native', amount: BigInt(tx.value), destinationTag: null });
    }
    return transfers;
  };

  /**
   * A log's index within its transaction: its place among the receipt's logs (the block-wide
   * `logIndex` changes when a reorg mines the transaction again beside other logs; this does not),
   * and the block the receipt is of (another than the one scanned: the chain moved under the scan).
   */
  const placeInTransaction = (log: RpcLog, outcome: RpcReceipt | null | undefined): { index: number; blockHash: string } => {
    if (!outcome) throw new Error(`${chain.id}: no receipt for ${log.transactionHash}, whose log the node just listed`);
    const index = (outcome.logs ?? []).findIndex((candidate) => BigInt(candidate.logIndex) === BigInt(log.logIndex));
    if (index < 0 && outcome.blockHash === log.blockHash) throw new Error(`${chain.id}: the receipt of ${log.transactionHash} lacks its log ${log.logIndex}`);
    return { index: Math.max(index, 0), blockHash: outcome.blockHash };
  };

  const tokenTransfers = async (block: RpcBlock, wanted: Set<string> | null): Promise<BlockTransfer[]> => {
    if (tokenContracts.length === 0 || wanted?.size === 0) return [];
    const toTopic = wanted !== null && wanted.size <= MAX_TOPIC_ADDRESSES ? [...wanted].map(addressTopic) : null;
    // by block hash: logs of exactly the block read, or an error if the node has moved off it
    const logs = (await rpc.send<RpcLog[]>('eth_getLogs', [{ blockHash: block.hash, address: tokenContracts, topics: [TRANSFER_TOPIC, null, toTopic] }]))
      .filter((log) => !log.removed && log.topics.length === 3 && log.topics[0] === TRANSFER_TOPIC)
      .map((log) => ({ log, to: topicAddress(log.topics[2]!) }))
      .filter(({ to }) => wanted === null || wanted.has(to.toLowerCase()));
    // one receipt per transaction with a deposit log, a few at a time
    const receipts = new Map<string, RpcReceipt | null>();
    await inParallel([...new Set(logs.map(({ log }) => log.transactionHash))], RECEIPTS_IN_FLIGHT, async (hash) => void receipts.set(hash, await receipt(hash)));
    return logs.map(({ log, to }) => ({
      txHash: log.transactionHash,
      blockNumber: Number(block.number),
      // a receipt of another block: the watcher sees the block changed under the scan, and scans again
      ...placeInTransaction(log, receipts.get(log.transactionHash)),
      from: topicAddress(log.topics[1]!),
      to,
      asset: log.address.toLowerCase(),
      amount: BigInt(log.data === '0x' ? 0 : log.data),
      destinationTag: null,
    }));
  };

  const gasLimitOf = async (request: { from: string; to: string; asset: string; amount: bigint }): Promise<bigint> => {
    if (request.asset === 'native') {
      const code = await rpc.send<string>('eth_getCode', [request.to, 'latest']);
      if (code === '0x') return NATIVE_TRANSFER_GAS;
    }
    const call =
      request.asset === 'native'
        ? { from: request.from, to: request.to, value: toBeHex(request.amount) }
        : { from: request.from, to: request.asset, data: TRANSFER + abi.encode(['address', 'uint256'], [request.to, request.amount]).slice(2) };
    try {
      return gasLimitFromEstimate(BigInt(await rpc.send<string>('eth_estimateGas', [call])));
    } catch (error) {
      // the sender cannot make the call yet (no tokens, no coins to a contract): the policy's limit
      if (!(error instanceof NodeAnswerError)) throw error;
      return policy?.tokenTransferGasLimit === undefined ? DEFAULT_TOKEN_TRANSFER_GAS : BigInt(policy.tokenTransferGasLimit);
    }
  };

  return {
    chain,

    head: async () => {
      const block = await blockAt('latest', false);
      if (!block) throw new Error(`${chain.id}: the node has no latest block`);
      return toHeader(block);
    },

    block: async (number) => {
      const block = await blockAt(number, false);
      return block ? toHeader(block) : null;
    },

    transfersInBlock: async (number, toAddresses) => {
      const block = await blockAt(number, true);
      if (!block) return [];
      const wanted = toAddresses ? new Set([...toAddresses].map((address) => address.toLowerCase())) : null;
      return [...(await nativeTransfers(block, wanted)), ...(await tokenTransfers(block, wanted))];
    },

    balance: async (owner, asset) => {
      if (asset === 'native') return BigInt(await rpc.send<string>('eth_getBalance', [owner, 'latest']));
      const data = BALANCE_OF + abi.encode(['address'], [owner]).slice(2);
      const answer = await rpc.send<string>('eth_call', [{ to: asset, data }, 'latest']);
      return answer === '0x' ? 0n : BigInt(answer);
    },

    nextNonce: async (owner) => nonces.next(owner, Number(await rpc.send<string>('eth_getTransactionCount', [owner, 'pending']))),

    unspentOutputs: () => Promise.resolve([]),

    requiresDestinationTag: () => Promise.resolve(false),

    estimateFee: async (request) => {
      const [gasLimit, latest, suggestedTip] = await Promise.all([
        gasLimitOf(request),
        blockAt('latest', false),
        policy?.priorityFeeGwei === undefined ? rpc.send<string>('eth_maxPriorityFeePerGas', []) : Promise.resolve('0x0'),
      ]);
      return eip1559Estimate({ gasLimit, baseFeePerGas: BigInt(latest?.baseFeePerGas ?? 0), suggestedPriorityFee: BigInt(suggestedTip), policy });
    },

    broadcast: async (raw) => {
      const transaction = Transaction.from(raw);
      const txHash = transaction.hash!;
      try {
        await rpc.send<string>('eth_sendRawTransaction', [raw]);
      } catch (error) {
        if (!(error instanceof NodeAnswerError)) throw error; // no node answered: the caller tries again later with the same bytes
        const answer = classifyEvmAnswer(error.message);
        if (answer !== 'known') throw new BroadcastRejectedError(error.message, answer);
      }
      if (transaction.from) nonces.sent(transaction.from, transaction.nonce);
      return { txHash };
    },

    transactionStatus: async (txHash): Promise<TransactionStatus> => {
      const outcome = await receipt(txHash);
      if (!outcome) {
        const known = await rpc.send<RpcTransaction | null>('eth_getTransactionByHash', [txHash]);
        return known ? { status: 'pending' } : { status: 'not_found' };
      }
      const blockNumber = Number(outcome.blockNumber);
      const fee = BigInt(outcome.gasUsed) * BigInt(outcome.effectiveGasPrice);
      const confirmations = (await headNumber()) - blockNumber + 1;
      if (outcome.status !== '0x1') return { status: 'failed', blockNumber, error: 'the transaction reverted on chain', fee, confirmations };
      return { status: 'confirmed', blockNumber, blockHash: outcome.blockHash, confirmations, fee };
    },

    provablyNever: async (raw) => {
      const transaction = Transaction.from(raw);
      if (!transaction.from) return null;
      // the nonce the account had used up to the block at the chain's depth: past ours, and ours is
      // not the one mined, means another transaction took the nonce for good
      const depthBlock = (await headNumber()) - chain.properties.confirmations + 1;
      if (depthBlock < 0) return null;
      const usedAtDepth = Number(await rpc.send<string>('eth_getTransactionCount', [transaction.from, toQuantity(depthBlock)]));
      if (usedAtDepth <= transaction.nonce) return null;
      if (await receipt(transaction.hash!)) return null;
      return `nonce ${transaction.nonce} of ${transaction.from} was taken by another transaction, ${chain.properties.confirmations} blocks deep`;
    },

    close: () => rpc.destroy(),
  };
};

/** The JSON-RPC client of a configured EVM chain: its endpoints behind the shared failover, retries logged. */
export const evmRpcFor = (chain: ChainDefinition, settings: Pick<ChainSettings, 'rpcUrls' | 'rpcTimeoutMs'>, logger?: Logger): EvmRpc =>
  createEvmRpc({ urls: settings.rpcUrls, evmChainId: chain.evmChainId!, timeoutMs: settings.rpcTimeoutMs, ...(logger ? { logger } : {}) });
