import { readFileSync } from 'node:fs';
import { Block, payments, Transaction } from 'bitcoinjs-lib';
import { z } from 'zod';
import type { ChainDefinition } from '../../catalog/chain.js';
import type { Logger } from '../../log.js';
import type { BitcoinFeePolicy, BitcoinRpcAuth } from '../config.js';
import { BroadcastRejectedError, type BlockHeader, type BlockTransfer, type ChainGateway, type TransactionStatus, type UnspentOutput } from '../gateway.js';
import { JsonRpcError, type HttpClient } from '../rpc/http.js';
import { addressOfOutputScript, bitcoinNetwork } from './address.js';
import { classifyBitcoinCoreAnswer } from './core-rpc-answers.js';
import { bitcoinFeeEstimate, DEFAULT_FEE_TARGET_BLOCKS } from './fee-rate.js';
import { txidToBroadcast } from './transactions.js';

/**
 * Bitcoin over **Bitcoin Core's JSON-RPC**, with no wallet and no address imported into the node:
 * blocks are read as raw hex (`getblockhash`, `getblock <hash> 0`) and decoded here; the outputs
 * the service may spend come from its own history (`OwnOutputs`: every output it was paid or paid
 * itself as change), each checked against the node's UTXO set (`gettxout`). Transaction status
 * needs the node's transaction index (`txindex=1`): without a wallet it is the only way Core finds
 * a mined transaction by its id. Forks are the watcher's business (it compares the block hashes
 * it stored, src/processes/deposit-watcher/fork-point.ts): every answer here is of the node's
 * current best chain.
 */

/** The outputs (txid:index) the service knows were paid to these addresses of the chain, spent or not: the node says which are still unspent. */
export type OwnOutputs = (chainId: string, addresses: readonly string[]) => Promise<{ txHash: string; index: number }[]>;

export interface BitcoinCoreGatewayOptions {
  chain: ChainDefinition;
  /** JSON-RPC client of the node (its credentials in its headers) */
  node: HttpClient;
  ownOutputs: OwnOutputs;
  logger: Logger;
  fees?: BitcoinFeePolicy;
}

/** Core's codes: -5 no such transaction/block, -8 block height out of range, -32601 method not found */
const RPC_NOT_FOUND = -5;
const RPC_OUT_OF_RANGE = -8;
const RPC_METHOD_NOT_FOUND = -32601;

const txOutSchema = z.object({ confirmations: z.number(), value: z.number(), scriptPubKey: z.object({ hex: z.string() }) }).nullable();
const verboseTxSchema = z.object({ txid: z.string(), hex: z.string(), blockhash: z.string().nullish(), confirmations: z.number().nullish() });
const verboseHeaderSchema = z.object({ hash: z.string(), height: z.number(), confirmations: z.number() });
const mempoolAcceptSchema = z.array(z.object({ txid: z.string(), allowed: z.boolean().optional(), 'reject-reason': z.string().optional() }));
const smartFeeSchema = z.object({ feerate: z.number().optional(), errors: z.array(z.string()).optional() });

/** BTC amounts in Core's JSON are numbers with 8 decimals: below 2.1e15 sat, so rounding the product is exact */
const satsOf = (btc: number) => BigInt(Math.round(btc * 1e8));
const txidOf = (hash: Uint8Array) => Buffer.from(hash).reverse().toString('hex');
const rpcCode = (error: unknown) => (error instanceof JsonRpcError ? error.code : undefined);

export const createBitcoinCoreGateway = ({ chain, node, ownOutputs, logger, fees = {} }: BitcoinCoreGatewayOptions): ChainGateway => {
  const network = bitcoinNetwork(chain.network);
  const feeTargetBlocks = fees.feeTargetBlocks ?? DEFAULT_FEE_TARGET_BLOCKS;
  let testMempoolAccept = true;

  const addressOf = (script: Uint8Array) => addressOfOutputScript(script, chain.network);
  /** the sender as the first input shows it (its key is in the witness or the scriptSig): P2WPKH, P2SH-P2WPKH, P2PKH; '' otherwise */
  const senderOf = (tx: Transaction): string => {
    const input = tx.ins[0];
    if (!input || tx.isCoinbase()) return '';
    const attempts = [
      () => payments.p2wpkh({ witness: input.witness, network }).address,
      () => payments.p2sh({ input: input.script, witness: input.witness, network }).address,
      () => payments.p2pkh({ input: input.script, network }).address,
    ];
    for (const attempt of attempts) {
      try {
        const found = attempt();
        if (found) return found;
      } catch {
        // not that kind of input
      }
    }
    return '';
  };

  const hashAt = async (height: number): Promise<string | null> => {
    try {
      return await node.call<string>('getblockhash', [height]);
    } catch (error) {
      if (rpcCode(error) === RPC_OUT_OF_RANGE) return null;
      throw error;
    }
  };
  const headerOf = async (height: number, hash: string): Promise<BlockHeader> => {
    const raw = Block.fromHex(await node.call<string>('getblockheader', [hash, false]));
    return { number: height, hash, parentHash: txidOf(raw.prevHash!), timestamp: new Date(raw.timestamp * 1000).toISOString() };
  };
  const rawTransaction = async (txid: string): Promise<z.infer<typeof verboseTxSchema> | null> => {
    try {
      return verboseTxSchema.parse(await node.call('getrawtransaction', [txid, true]));
    } catch (error) {
      if (rpcCode(error) === RPC_NOT_FOUND) return null;
      throw error;
    }
  };
  /** the confirmed transaction's block (height, depth), or null while it is in no block of the best chain */
  const minedIn = async (tx: z.infer<typeof verboseTxSchema>) => {
    if (!tx.blockhash || !tx.confirmations) return null;
    const header = verboseHeaderSchema.parse(await node.call('getblockheader', [tx.blockhash, true]));
    return header.confirmations > 0 ? header : null; // -1: a block off the best chain
  };
  /** what the inputs held minus what the outputs pay (each spent transaction from the index) */
  const feeOf = async (tx: Transaction): Promise<bigint> => {
    let paid = 0n;
    for (const input of tx.ins) {
      const spent = await rawTransaction(txidOf(input.hash));
      if (!spent) return 0n;
      paid += Transaction.fromHex(spent.hex).outs[input.index]!.value;
    }
    return paid - tx.outs.reduce((total, output) => total + output.value, 0n);
  };
  const refuse = (answer: string): 'known' => {
    const reading = classifyBitcoinCoreAnswer(answer);
    if (reading === 'known') return reading;
    throw new BroadcastRejectedError(answer, reading);
  };

  const unspentOutputs = async (addresses: readonly string[]): Promise<UnspentOutput[]> => {
    if (addresses.length === 0) return [];
    const wanted = new Set(addresses);
    const seen = new Set<string>();
    const outputs: UnspentOutput[] = [];
    for (const { txHash, index } of await ownOutputs(chain.id, addresses)) {
      if (seen.has(`${txHash}:${index}`)) continue;
      seen.add(`${txHash}:${index}`);
      // include_mempool: an output a pending transaction spends is not spendable, one it makes is (0 confirmations)
      const output = txOutSchema.parse(await node.call('gettxout', [txHash, index, true]));
      if (!output) continue;
      const paidTo = addressOf(Buffer.from(output.scriptPubKey.hex, 'hex'));
      if (paidTo === undefined || !wanted.has(paidTo)) continue;
      outputs.push({ txHash, index, address: paidTo, amount: satsOf(output.value), confirmations: output.confirmations });
    }
    return outputs;
  };

  return {
    chain,

    head: async () => {
      const height = await node.call<number>('getblockcount');
      const hash = await hashAt(height);
      if (hash === null) throw new Error(`the node has no block at its own height ${height}`);
      return headerOf(height, hash);
    },

    block: async (number) => {
      const hash = await hashAt(number);
      return hash === null ? null : headerOf(number, hash);
    },

    transfersInBlock: async (number, toAddresses) => {
      const hash = await hashAt(number);
      if (hash === null) return [];
      const block = Block.fromHex(await node.call<string>('getblock', [hash, 0]));
      const transfers: BlockTransfer[] = [];
      for (const tx of block.transactions ?? []) {
        let from: string | undefined;
        tx.outs.forEach((output, index) => {
          const to = addressOf(output.script);
          if (to === undefined || (toAddresses && !toAddresses.has(to))) return;
          from ??= senderOf(tx);
          transfers.push({ txHash: tx.getId(), blockNumber: number, blockHash: hash, index, from, to, asset: 'native', amount: output.value, destinationTag: null });
        });
      }
      return transfers;
    },

    balance: async (owner, asset) => {
      if (asset !== 'native') return 0n;
      const confirmed = (await unspentOutputs([owner])).filter((output) => output.confirmations > 0);
      return confirmed.reduce((total, output) => total + output.amount, 0n);
    },

    nextNonce: async () => 0,

    unspentOutputs,

    requiresDestinationTag: async () => false,

    estimateFee: async () => {
      const estimate = smartFeeSchema.parse(await node.call('estimatesmartfee', [feeTargetBlocks]));
      // BTC per 1000 vbytes; no estimate yet (a young node, a quiet regtest): the policy's floor, if the operator set one
      let rate: bigint;
      if (estimate.feerate !== undefined && estimate.feerate > 0) rate = (satsOf(estimate.feerate) + 999n) / 1000n;
      else if (fees.minFeeRateSatPerVbyte !== undefined) rate = BigInt(fees.minFeeRateSatPerVbyte);
      else throw new Error(`the node has no fee estimate for ${feeTargetBlocks} blocks (${estimate.errors?.join('; ') ?? 'no feerate'}); set fees.minFeeRateSatPerVbyte to sign at a floor meanwhile`);
      return bitcoinFeeEstimate(rate, fees);
    },

    broadcast: async (raw) => {
      const txHash = txidToBroadcast(raw);
      if (testMempoolAccept) {
        try {
          const [verdict] = mempoolAcceptSchema.parse(await node.call('testmempoolaccept', [[raw]]));
          if (verdict && verdict.allowed === false && refuse(`testmempoolaccept: ${verdict['reject-reason'] ?? 'refused'}`) === 'known') return { txHash };
        } catch (error) {
          if (rpcCode(error) !== RPC_METHOD_NOT_FOUND) throw error;
          testMempoolAccept = false;
          logger.warn('bitcoin: the node has no testmempoolaccept; transactions are sent without that check', { chainId: chain.id });
        }
      }
      try {
        const answered = await node.call<string>('sendrawtransaction', [raw]);
        if (answered !== txHash) logger.warn('bitcoin: the node names another txid than the transaction', { chainId: chain.id, expected: txHash, answered });
      } catch (error) {
        if (!(error instanceof JsonRpcError)) throw error;
        refuse(error.message);
      }
      return { txHash };
    },

    transactionStatus: async (txHash): Promise<TransactionStatus> => {
      const found = await rawTransaction(txHash);
      if (!found) return { status: 'not_found' };
      const block = await minedIn(found);
      if (!block) return { status: 'pending' };
      // a mined Bitcoin transaction cannot fail: it is valid or it is not in a block
      return { status: 'confirmed', blockNumber: block.height, blockHash: block.hash, confirmations: block.confirmations, fee: await feeOf(Transaction.fromHex(found.hex)) };
    },

    provablyNever: async (raw) => {
      const transaction = Transaction.fromHex(raw);
      const depth = chain.properties.confirmations;
      const tipBefore = await node.call<string>('getbestblockhash');
      const own = await rawTransaction(transaction.getId());
      if (own && (await minedIn(own))) return null; // the chain holds it
      for (const input of transaction.ins) {
        const spentTxHash = txidOf(input.hash);
        // unspent in the chain (mempool aside): nothing proven by this input
        if (txOutSchema.parse(await node.call('gettxout', [spentTxHash, input.index, false])) !== null) continue;
        // spent in the chain, or never there: only an output of a mined transaction can be proven spent
        const spent = await rawTransaction(spentTxHash);
        if (!spent || !(await minedIn(spent))) continue;
        // Core keeps no index of spends: the spender is not in the newest depth-1 blocks, so it is at least `depth` deep
        if (await spentInNewestBlocks(spentTxHash, input.index, depth - 1)) continue;
        if ((await node.call<string>('getbestblockhash')) !== tipBefore) return null; // the chain moved meanwhile: ask again later
        return `its input ${spentTxHash}:${input.index} was spent by another transaction, at least ${depth} blocks deep`;
      }
      return null;
    },
  };

  async function spentInNewestBlocks(txHash: string, index: number, blocks: number): Promise<boolean> {
    const height = await node.call<number>('getblockcount');
    for (let number = height; number > height - blocks && number >= 0; number--) {
      const hash = await hashAt(number);
      if (hash === null) continue;
      const block = Block.fromHex(await node.call<string>('getblock', [hash, 0]));
      const spends = (block.transactions ?? []).some((tx) => tx.ins.some((input) => input.index === index && txidOf(input.hash) === txHash));
      if (spends) return true;
    }
    return false;
  }
};

/**
 * The Authorization header of Bitcoin Core's RPC: Basic over rpcuser/rpcpassword, or over the
 * cookie file's `__cookie__:<secret>` line, read at each request (the node writes a new one at
 * every start).
 */
export const bitcoinCoreAuthorization = (auth: BitcoinRpcAuth | undefined): (() => Record<string, string>) => {
  if (!auth) return () => ({});
  const basic = (credentials: string) => ({ authorization: `Basic ${Buffer.from(credentials).toString('base64')}` });
  if ('user' in auth) {
    const header = basic(`${auth.user}:${auth.password}`);
    return () => header;
  }
  return () => basic(readFileSync(auth.cookieFile, 'utf8').trim());
};
