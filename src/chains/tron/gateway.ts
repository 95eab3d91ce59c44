import { z } from 'zod';
import type { Logger } from '../../log.js';
import type { ChainDefinition } from '../../catalog/chain.js';
import type { TronFeePolicy } from '../config.js';
import { classifyTronAnswer } from './broadcast-answers.js';
import { BroadcastRejectedError, type BlockHeader, type BlockTransfer, type ChainGateway, type FeeEstimate, type TransactionStatus } from '../gateway.js';
import type { HttpClient } from '../rpc/http.js';
import { tronAddressFromHex, tronAddressToHex } from './address.js';
import { accountResourceSchema, cappedFeeLimit, chainParametersSchema, tronPrices, tronTransferCost } from './resource-fees.js';

/**
 * Tron over a java-tron full node's HTTP API (/wallet/…, port 8090; TronGrid serves the same
 * paths). Blocks from getnowblock/getblockbynum, TRX transfers from the block's TransferContract
 * transactions, TRC-20 transfers from the `Transfer` event logs of gettransactioninfobyblocknum,
 * fees from getaccountresource + getchainparameters (+ a triggerconstantcontract dry run for a
 * TRC-20 transfer's energy). Requests ask for `visible: true` (base58 addresses) where the API
 * allows it; event logs always carry hex.
 */

/** keccak256("Transfer(address,address,uint256)") */
const TRANSFER_TOPIC = 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

const blockSchema = z.object({
  blockID: z.string(),
  block_header: z.object({ raw_data: z.object({ number: z.number().optional(), parentHash: z.string(), timestamp: z.number() }) }),
  transactions: z
    .array(
      z.object({
        txID: z.string(),
        ret: z.array(z.object({ contractRet: z.string().optional() })).optional(),
        raw_data: z.object({ contract: z.array(z.object({ type: z.string(), parameter: z.object({ value: z.record(z.string(), z.unknown()) }) })) }),
      }),
    )
    .optional(),
});
const transferValueSchema = z.object({ owner_address: z.string(), to_address: z.string(), amount: z.number() });
const transactionInfoSchema = z.object({
  id: z.string(),
  fee: z.number().optional(),
  blockNumber: z.number(),
  result: z.string().optional(),
  resMessage: z.string().optional(),
  receipt: z.object({ result: z.string().optional() }).optional(),
  log: z.array(z.object({ address: z.string(), topics: z.array(z.string()).optional(), data: z.string().optional() })).optional(),
});
const broadcastSchema = z.object({ result: z.boolean().optional(), code: z.string().optional(), txid: z.string().optional(), message: z.string().optional() });

/** base58 whatever form the node used (visible: true gives T…, otherwise 41… hex) */
const base58 = (address: string) => (address.startsWith('T') ? address : tronAddressFromHex(address.toLowerCase()));
/** node messages arrive hex-encoded */
const fromHexText = (text: string | undefined) => (text && /^(?:[0-9a-fA-F]{2})+$/.test(text) ? Buffer.from(text, 'hex').toString('utf8') : (text ?? ''));
const isEmpty = (value: unknown) => value === null || (typeof value === 'object' && Object.keys(value as object).length === 0);
/** the node's reasons that say "not now", not "never": the processor tries again */

export interface TronGatewayOptions {
  chain: ChainDefinition;
  node: HttpClient;
  logger: Logger;
  /** CHAINS_CONFIG's `fees`: the ceiling of a TRC-20 transfer's fee_limit */
  fees?: TronFeePolicy;
}

export const createTronGateway = ({ chain, node, logger, fees = {} }: TronGatewayOptions): ChainGateway => {
  const post = async (path: string, body: object = {}): Promise<unknown> => {
    const answer = await node.json<Record<string, unknown>>(path, body);
    if (answer === null) throw new Error(`the Tron node has no ${path}`);
    // java-tron answers a bad request with HTTP 200 and { Error: "…" }
    if (typeof answer.Error === 'string') throw new Error(`${path}: ${answer.Error}`);
    return answer;
  };
  const blockAt = async (number: number) => {
    const answer = await post('/wallet/getblockbynum', { num: number, visible: true });
    return isEmpty(answer) ? null : blockSchema.parse(answer);
  };
  const header = (block: z.infer<typeof blockSchema>): BlockHeader => ({
    number: block.block_header.raw_data.number ?? 0,
    hash: block.blockID,
    parentHash: block.block_header.raw_data.parentHash,
    timestamp: new Date(block.block_header.raw_data.timestamp).toISOString(),
  });
  const headNumber = async () => header(blockSchema.parse(await post('/wallet/getnowblock', { visible: true }))).number;

  const trc20Balance = async (owner: string, contract: string) => {
    const parameter = tronAddressToHex(owner).slice(2).padStart(64, '0');
    const answer = z
      .object({ constant_result: z.array(z.string()).optional(), result: z.object({ result: z.boolean().optional(), message: z.string().optional() }) })
      .parse(await post('/wallet/triggerconstantcontract', { owner_address: owner, contract_address: contract, function_selector: 'balanceOf(address)', parameter, visible: true }));
    if (!answer.result.result || !answer.constant_result?.[0]) throw new Error(`balanceOf on ${contract} failed: ${fromHexText(answer.result.message)}`);
    return BigInt(`0x${answer.constant_result[0]}`);
  };

  const trc20TransferEnergy = async (from: string, to: string, contract: string, amount: bigint) => {
    const parameter = tronAddressToHex(to).slice(2).padStart(64, '0') + amount.toString(16).padStart(64, '0');
    const answer = z
      .object({ energy_used: z.number().optional(), result: z.object({ result: z.boolean().optional(), message: z.string().optional() }) })
      .parse(await post('/wallet/triggerconstantcontract', { owner_address: from, contract_address: contract, function_selector: 'transfer(address,uint256)', parameter, visible: true }));
    if (!answer.result.result) throw new Error(`the dry run of transfer on ${contract} failed: ${fromHexText(answer.result.message)}`);
    return BigInt(answer.energy_used ?? 0);
  };

  return {
    chain,

    head: async () => header(blockSchema.parse(await post('/wallet/getnowblock', { visible: true }))),

    block: async (number) => {
      const block = await blockAt(number);
      return block ? header(block) : null;
    },

    transfersInBlock: async (number, toAddresses) => {
      const block = await blockAt(number);
      if (!block) return [];
      const wanted = (to: string) => !toAddresses || toAddresses.has(to);
      const common = { blockNumber: number, blockHash: block.blockID, destinationTag: null };
      const transfers: BlockTransfer[] = [];
      let callsContracts = false;
      for (const tx of block.transactions ?? []) {
        const contract = tx.raw_data.contract[0];
        if (contract?.type === 'TriggerSmartContract') callsContracts = true;
        if (contract?.type !== 'TransferContract' || tx.ret?.[0]?.contractRet !== 'SUCCESS') continue;
        const value = transferValueSchema.parse(contract.parameter.value);
        const to = base58(value.to_address);
        if (wanted(to)) transfers.push({ ...common, txHash: tx.txID, index: 0, from: base58(value.owner_address), to, asset: 'native', amount: BigInt(value.amount) });
      }
      if (!callsContracts) return transfers;
      const infos = z.array(transactionInfoSchema).parse(await node.json('/wallet/gettransactioninfobyblocknum', { num: number }));
      for (const info of infos) {
        // a reverted call's logs never happened
        if (info.receipt?.result !== 'SUCCESS') continue;
        (info.log ?? []).forEach((log, index) => {
          const [topic, fromWord, toWord] = log.topics ?? [];
          if (log.topics?.length !== 3 || topic?.toLowerCase() !== TRANSFER_TOPIC || !fromWord || !toWord || !log.data) return;
          const to = tronAddressFromHex(`41${toWord.slice(-40)}`);
          if (!wanted(to)) return;
          transfers.push({ ...common, txHash: info.id, index, from: tronAddressFromHex(`41${fromWord.slice(-40)}`), to, asset: tronAddressFromHex(`41${log.address.slice(-40)}`), amount: BigInt(`0x${log.data}`) });
        });
      }
      return transfers;
    },

    balance: async (owner, asset) => {
      if (asset !== 'native') return trc20Balance(owner, asset);
      const account = z.object({ balance: z.number().optional() }).parse(await post('/wallet/getaccount', { address: owner, visible: true }));
      return BigInt(account.balance ?? 0);
    },

    nextNonce: async () => 0,
    unspentOutputs: async () => [],
    requiresDestinationTag: async () => false,

    estimateFee: async ({ from, to, asset, amount }): Promise<FeeEstimate> => {
      const prices = tronPrices(chainParametersSchema.parse(await post('/wallet/getchainparameters')));
      const resources = accountResourceSchema.parse(await post('/wallet/getaccountresource', { address: from, visible: true }));
      if (asset === 'native') {
        const createsAccount = isEmpty(await post('/wallet/getaccount', { address: to, visible: true }));
        const { fee } = tronTransferCost({ prices, resources, createsAccount });
        return { fee, parameters: { feeLimit: '0' } };
      }
      const energy = await trc20TransferEnergy(from, to, asset, amount);
      const { fee, feeLimit } = cappedFeeLimit(tronTransferCost({ prices, resources, energy }), energy * prices.energyFee, fees.maxFeeLimitSun);
      return { fee, parameters: { feeLimit: String(feeLimit), energy: String(energy) } };
    },

    broadcast: async (raw) => {
      let signed: unknown;
      try {
        signed = JSON.parse(raw);
      } catch {
        throw new BroadcastRejectedError('a signed Tron transaction is JSON');
      }
      const txId = z.object({ txID: z.string() }).parse(signed).txID.toLowerCase();
      const answer = broadcastSchema.parse(await post('/wallet/broadcasttransaction', signed as object));
      if (answer.result === true) return { txHash: txId };
      const reason = `${answer.code ?? 'OTHER_ERROR'}: ${fromHexText(answer.message)}`;
      const refusal = classifyTronAnswer(reason);
      if (refusal === 'known') return { txHash: txId };
      logger.warn('tron: broadcast refused', { chainId: chain.id, txHash: txId, reason, refusal });
      throw new BroadcastRejectedError(reason, refusal);
    },

    transactionStatus: async (txHash): Promise<TransactionStatus> => {
      const found = await post('/wallet/gettransactioninfobyid', { value: txHash });
      if (isEmpty(found)) {
        const pending = await post('/wallet/gettransactionfrompending', { value: txHash });
        return isEmpty(pending) ? { status: 'not_found' } : { status: 'pending' };
      }
      const info = transactionInfoSchema.parse(found);
      const fee = BigInt(info.fee ?? 0);
      const receiptResult = info.receipt?.result;
      if (info.result === 'FAILED' || (receiptResult !== undefined && receiptResult !== 'SUCCESS')) {
        const confirmations = (await headNumber()) - info.blockNumber + 1;
        return { status: 'failed', blockNumber: info.blockNumber, error: fromHexText(info.resMessage) || receiptResult || 'FAILED', fee, confirmations };
      }
      const [block, head] = await Promise.all([blockAt(info.blockNumber), headNumber()]);
      if (!block) return { status: 'pending' };
      return { status: 'confirmed', blockNumber: info.blockNumber, blockHash: block.blockID, confirmations: head - info.blockNumber + 1, fee };
    },

    provablyNever: async (raw) => {
      const { txID, raw_data: rawData } = z.object({ txID: z.string(), raw_data: z.object({ expiration: z.number() }) }).parse(JSON.parse(raw));
      // a block at the chain's depth produced after the expiration: no later block can include it
      const depthBlock = await blockAt((await headNumber()) - chain.properties.confirmations + 1);
      if (!depthBlock || depthBlock.block_header.raw_data.timestamp <= rawData.expiration) return null;
      if (!isEmpty(await post('/wallet/gettransactioninfobyid', { value: txID }))) return null;
      return `it expired at ${new Date(rawData.expiration).toISOString()}, before a block ${chain.properties.confirmations} deep`;
    },
  };
};
