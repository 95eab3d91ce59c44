import { Transaction } from 'bitcoinjs-lib';
import { z } from 'zod';
import type { ChainDefinition } from '../../catalog/chain.js';
import type { BitcoinFeePolicy } from '../config.js';
import { classifyBitcoinAnswer } from './broadcast-answers.js';
import { BroadcastRejectedError, type BlockHeader, type BlockTransfer, type ChainGateway, type TransactionStatus } from '../gateway.js';
import { bitcoinFeeEstimate, DEFAULT_FEE_TARGET_BLOCKS } from './fee-rate.js';
import { txidToBroadcast } from './transactions.js';
import { RpcHttpError, type HttpClient } from '../rpc/http.js';
import type { Logger } from '../../log.js';

/**
 * Bitcoin over an **Esplora** HTTP API (Blockstream's esplora/electrs, mempool.space; API:
 * github.com/Blockstream/esplora/blob/master/API.md). Esplora indexes addresses, so the outputs
 * and balances of deposit addresses are asked of it directly. Several Esplora instances (a
 * self-hosted electrs first, a public one behind it) give failover. The other Bitcoin gateway,
 * over Bitcoin Core's JSON-RPC (core-rpc-gateway.ts), needs no address index: it keeps the
 * service's outputs from the service's own history.
 */

const ESPLORA_PAGE_SIZE = 25;

const blockSchema = z.object({ id: z.string(), height: z.number(), previousblockhash: z.string().nullable().optional(), timestamp: z.number(), tx_count: z.number() });
const statusSchema = z.object({ confirmed: z.boolean(), block_height: z.number().optional(), block_hash: z.string().optional() });
const outputSchema = z.object({ scriptpubkey_address: z.string().optional(), value: z.number() });
const txSchema = z.object({
  txid: z.string(),
  vin: z.array(z.object({ is_coinbase: z.boolean().optional(), prevout: outputSchema.nullable().optional() })),
  vout: z.array(outputSchema),
  fee: z.number().optional(),
  status: statusSchema,
});
const utxoSchema = z.array(z.object({ txid: z.string(), vout: z.number(), value: z.number(), status: statusSchema }));
const addressSchema = z.object({ chain_stats: z.object({ funded_txo_sum: z.number(), spent_txo_sum: z.number() }) });
const feeEstimatesSchema = z.record(z.string(), z.number());

/** satoshi amounts are integers below 2.1e15, exact in a JSON number */
const sats = (value: number) => BigInt(value);

/** The fee rate (sat/vB, whole, at least 1) for a confirmation within `targetBlocks`: the estimate of the nearest target at or below it. */
export const feeRateForTarget = (estimates: Record<string, number>, targetBlocks: number): bigint => {
  const targets = Object.keys(estimates)
    .map(Number)
    .filter((target) => Number.isInteger(target) && target > 0)
    .sort((a, b) => a - b);
  if (targets.length === 0) throw new Error('the node has no fee estimates');
  const chosen = [...targets].reverse().find((target) => target <= targetBlocks) ?? targets[0]!;
  return BigInt(Math.max(1, Math.ceil(estimates[String(chosen)]!)));
};

/** Esplora's answer to GET /tx/:txid/outspend/:vout */
const outspendSchema = z.object({ spent: z.boolean(), txid: z.string().optional(), status: z.object({ confirmed: z.boolean(), block_height: z.number().optional() }).optional() });

export interface BitcoinGatewayOptions {
  chain: ChainDefinition;
  esplora: HttpClient;
  logger: Logger;
  /** CHAINS_CONFIG's `fees`: the confirmation target and the bounds of the rate signed */
  fees?: BitcoinFeePolicy;
}

export const createBitcoinGateway = ({ chain, esplora, logger, fees = {} }: BitcoinGatewayOptions): ChainGateway => {
  const feeTargetBlocks = fees.feeTargetBlocks ?? DEFAULT_FEE_TARGET_BLOCKS;
  const must = async <T>(what: Promise<T | null>, path: string): Promise<T> => {
    const value = await what;
    if (value === null) throw new Error(`Esplora has no ${path}`);
    return value;
  };
  const tipHeight = async () => Number(await must(esplora.text('/blocks/tip/height'), '/blocks/tip/height'));
  const blockByHash = async (hash: string) => blockSchema.parse(await must(esplora.json(`/block/${hash}`), `/block/${hash}`));
  const hashAt = async (height: number) => (await esplora.text(`/block-height/${height}`))?.trim() ?? null;
  const header = (block: z.infer<typeof blockSchema>): BlockHeader => ({
    number: block.height,
    hash: block.id,
    parentHash: block.previousblockhash ?? '0'.repeat(64),
    timestamp: new Date(block.timestamp * 1000).toISOString(),
  });

  const blockAt = async (height: number) => {
    const hash = await hashAt(height);
    return hash === null ? null : blockByHash(hash);
  };

  return {
    chain,

    head: async () => header(await blockByHash((await must(esplora.text('/blocks/tip/hash'), '/blocks/tip/hash')).trim())),

    block: async (number) => {
      const block = await blockAt(number);
      return block ? header(block) : null;
    },

    transfersInBlock: async (number, toAddresses) => {
      const block = await blockAt(number);
      if (!block) return [];
      const transfers: BlockTransfer[] = [];
      for (let start = 0; start < block.tx_count; start += ESPLORA_PAGE_SIZE) {
        const page = z.array(txSchema).parse(await must(esplora.json(`/block/${block.id}/txs/${start}`), `/block/${block.id}/txs/${start}`));
        for (const tx of page) {
          // the first input's address names the sender (a coinbase has none)
          const from = tx.vin[0]?.prevout?.scriptpubkey_address ?? '';
          tx.vout.forEach((output, index) => {
            const to = output.scriptpubkey_address;
            if (to === undefined || (toAddresses && !toAddresses.has(to))) return; // OP_RETURN and bare scripts pay no address
            transfers.push({ txHash: tx.txid, blockNumber: number, blockHash: block.id, index, from, to, asset: 'native', amount: sats(output.value), destinationTag: null });
          });
        }
      }
      return transfers;
    },

    balance: async (address, asset) => {
      if (asset !== 'native') return 0n;
      const stats = addressSchema.parse(await must(esplora.json(`/address/${address}`), `/address/${address}`)).chain_stats;
      return sats(stats.funded_txo_sum) - sats(stats.spent_txo_sum);
    },

    nextNonce: async () => 0,

    unspentOutputs: async (addresses) => {
      if (addresses.length === 0) return [];
      const tip = await tipHeight();
      const outputs = [];
      for (const address of addresses) {
        const utxos = utxoSchema.parse((await esplora.json(`/address/${address}/utxo`)) ?? []);
        for (const utxo of utxos) {
          const confirmations = utxo.status.confirmed && utxo.status.block_height !== undefined ? tip - utxo.status.block_height + 1 : 0;
          outputs.push({ txHash: utxo.txid, index: utxo.vout, address, amount: sats(utxo.value), confirmations });
        }
      }
      return outputs;
    },

    requiresDestinationTag: async () => false,

    estimateFee: async () => bitcoinFeeEstimate(feeRateForTarget(feeEstimatesSchema.parse(await must(esplora.json('/fee-estimates'), '/fee-estimates')), feeTargetBlocks), fees),

    broadcast: async (raw) => {
      const txHash = txidToBroadcast(raw);
      try {
        const answer = await esplora.text('/tx', raw);
        if (answer === null) throw new BroadcastRejectedError('the node does not accept transactions (404 on POST /tx)');
        if (answer.trim() !== txHash) logger.warn('bitcoin: the node names another txid than the transaction', { chainId: chain.id, expected: txHash, answered: answer.trim() });
        return { txHash };
      } catch (error) {
        if (error instanceof RpcHttpError && error.status === 400) {
          const answer = classifyBitcoinAnswer(error.body);
          if (answer === 'known') return { txHash };
          throw new BroadcastRejectedError(error.body, answer);
        }
        throw error;
      }
    },

    transactionStatus: async (txHash): Promise<TransactionStatus> => {
      const found = await esplora.json(`/tx/${txHash}`);
      if (found === null) return { status: 'not_found' };
      const tx = txSchema.parse(found);
      if (!tx.status.confirmed || tx.status.block_height === undefined || tx.status.block_hash === undefined) return { status: 'pending' };
      const tip = await tipHeight();
      // a mined Bitcoin transaction cannot fail: it is valid or it is not in a block
      return { status: 'confirmed', blockNumber: tx.status.block_height, blockHash: tx.status.block_hash, confirmations: tip - tx.status.block_height + 1, fee: sats(tx.fee ?? 0) };
    },

    provablyNever: async (raw) => {
      const transaction = Transaction.fromHex(raw);
      const txHash = transaction.getId();
      const tip = await tipHeight();
      for (const input of transaction.ins) {
        const spentTxHash = Buffer.from(input.hash).reverse().toString('hex');
        const found = await esplora.json(`/tx/${spentTxHash}/outspend/${input.index}`);
        if (found === null) continue;
        const outspend = outspendSchema.parse(found);
        if (!outspend.spent || !outspend.txid || outspend.txid === txHash || !outspend.status?.confirmed || outspend.status.block_height === undefined) continue;
        if (tip - outspend.status.block_height + 1 >= chain.properties.confirmations) {
          return `its input ${spentTxHash}:${input.index} was spent by ${outspend.txid}, ${chain.properties.confirmations} blocks deep`;
        }
      }
      return null;
    },
  };
};
