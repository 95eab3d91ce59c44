import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { address, networks } from 'bitcoinjs-lib';
import bcoin, { type ChainEntry, type Coin, type FullNode, type TX, type VerifyErrorLike } from 'bcoin';

/**
 * An independent Bitcoin full node in the test process: bcoin (its own consensus, script checks
 * and mempool policy, none of it from bitcoinjs-lib), regtest, in memory, no wallet. It is reached
 * the way the service reaches Bitcoin Core, over JSON-RPC with Basic credentials, through a small
 * server that bridges where bcoin 1.0.2 answers unlike Core (nothing of it is in production code):
 * - sendrawtransaction: bcoin answers the txid even when its mempool refuses; here the mempool's
 *   verdict is Core's answer (-26 reason, -25 bad-txns-inputs-missingorspent for spent or unknown
 *   inputs, which bcoin keeps as an orphan, -27 for a transaction already in the chain);
 * - BIP125: bcoin 1.0.2 refuses every conflict with its mempool (`bad-txns-inputs-spent`), by
 *   default every transaction that signals replaceability, and never counts a version 2
 *   transaction as signalling; here a conflict is replaced as Core does (all it conflicts with
 *   signal by an input's nSequence, it pays their fees and 1 sat/vB of its own size more), else
 *   Core's `insufficient fee` or `txn-mempool-conflict`;
 * - getrawtransaction: bcoin's "Transaction not found." (-1) is Core's -5;
 * - getblockheader: bcoin counts confirmations of a block off the best chain too; Core answers -1;
 * - estimatesmartfee: bcoin's `{ fee, blocks }` (fee -1 without data) is Core's `{ feerate }` or `{ errors }`.
 * testmempoolaccept is left out: bcoin has none, and the gateway must do without it.
 */

const USER = 'ledgergate';
const PASSWORD = 'regtest-password';
/** segwit (and CSV) activate on bcoin's regtest only from this height */
const SEGWIT_HEIGHT = 432;
const COINBASE_MATURITY = 100;
const HARNESS_FEE_SATS = 2_000;

interface RpcAnswer {
  result: unknown;
  error: { code: number; message: string } | null;
}
const ok = (result: unknown): RpcAnswer => ({ result, error: null });
const refused = (code: number, message: string): RpcAnswer => ({ result: null, error: { code, message } });
const isVerifyError = (error: unknown): error is VerifyErrorLike => typeof error === 'object' && error !== null && (error as { type?: unknown }).type === 'VerifyError';

export interface RegtestNode {
  /** the JSON-RPC URL and its credentials, as CHAINS_CONFIG names them */
  url: string;
  rpcAuth: { user: string; password: string };
  node: FullNode;
  /** mines blocks on the best chain; `withMempool: false` leaves the mempool out (a fee market that passes it by) */
  mine(count: number, options?: { withMempool?: boolean }): Promise<string[]>;
  /** the best chain's tip, to fork from later */
  tip(): ChainEntry;
  /**
   * A competing chain of `count` blocks on `parent`, its first block holding a double spend of the
   * harness's payment `txid` (the coin back to the harness): longer than the best chain, it takes over.
   */
  reorg(parent: ChainEntry, count: number, doubleSpending: string): Promise<{ txid: string; hashes: string[] }>;
  /** the harness pays an address of the chain's network (tb1…) from its own coins; the transaction goes through the bridged sendrawtransaction */
  pay(to: string, amount: bigint, options?: { replaceable?: boolean }): Promise<{ txid: string; answer: RpcAnswer }>;
  /** one JSON-RPC call as the service makes it (bridged) */
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  inMempool(txid: string): boolean;
  stop(): Promise<void>;
}

/** BIP125 as Core reads it: an input's nSequence below 0xfffffffe (bcoin's isRBF() says no for every version 2 transaction) */
const signalsReplaceability = (tx: TX) => tx.inputs.some((input) => input.sequence < 0xfffffffe);
const internalHash = (txid: string) => Buffer.from(txid, 'hex').reverse().toString('hex');

export const startRegtestNode = async (): Promise<RegtestNode> => {
  // bcoin's own HTTP server (unused: the bridge below answers) on a port the system picks: regtest's
  // fixed 48332 lies in the range outgoing connections take their ports from, so it was sometimes taken
  const node = new bcoin.FullNode({ network: 'regtest', memory: true, workers: false, listen: false, indexTX: true, logLevel: 'none', replaceByFee: true, 'replace-by-fee': true, httpHost: '127.0.0.1', httpPort: 0 });
  await node.open();
  const key = bcoin.KeyRing.generate();
  const harnessAddress = key.getAddress();
  const coinbases: { coin: Coin; height: number }[] = [];
  const payments = new Map<string, { coin: Coin; to: unknown; amount: number }>();

  /** mines `count` blocks on `parent` (the best tip unless given: a competing chain otherwise), the first holding `include` */
  const mineOn = async (count: number, options: { withMempool?: boolean; parent?: ChainEntry; include?: { tx: TX; coin: Coin } } = {}) => {
    const mempool = node.miner.mempool;
    // a competing chain's blocks cannot come from the mempool (it follows the best tip)
    if (options.withMempool === false || options.parent) node.miner.mempool = null;
    const hashes: string[] = [];
    let parent = options.parent ?? null;
    try {
      for (let i = 0; i < count; i++) {
        const job = await node.miner.cpu.createJob(parent, harnessAddress);
        if (i === 0 && options.include) {
          const view = new bcoin.CoinView();
          view.addCoin(options.include.coin);
          job.attempt.addTX(options.include.tx, view);
          job.refresh();
        }
        const block = await node.miner.cpu.mineAsync(job);
        const entry = await node.chain.add(block);
        if (!entry) throw new Error('bcoin refused a block it mined');
        coinbases.push({ coin: bcoin.Coin.fromTX(block.txs[0]!, 0, entry.height), height: entry.height });
        hashes.push(entry.rhash());
        parent = entry;
      }
    } finally {
      node.miner.mempool = mempool;
    }
    return hashes;
  };

  const coinValue = async (hash: string, index: number): Promise<number> => {
    const chain = node.chain as unknown as { getCoin(hash: string, index: number): Promise<Coin | null> };
    const pool = node.mempool as unknown as { getCoin(hash: string, index: number): Coin | null };
    return ((await chain.getCoin(hash, index)) ?? pool.getCoin(hash, index))?.value ?? 0;
  };

  /** Core's sendrawtransaction over bcoin's mempool */
  const send = async (tx: TX): Promise<RpcAnswer> => {
    const hash = tx.hash('hex');
    if (node.mempool.hasEntry(hash)) return ok(tx.txid());
    const conflicts = [...new Set(tx.inputs.map((input) => node.mempool.getSpent(input.prevout.hash, input.prevout.index)).filter((entry) => entry !== null && entry !== undefined))];
    if (conflicts.length > 0) {
      if (!conflicts.every((entry) => signalsReplaceability(entry.tx))) return refused(-26, 'txn-mempool-conflict');
      let paid = 0;
      for (const input of tx.inputs) paid += await coinValue(input.prevout.hash, input.prevout.index);
      const fee = paid - tx.outputs.reduce((total, output) => total + output.value, 0);
      const replacedFee = conflicts.reduce((total, entry) => total + entry.fee, 0);
      if (fee < replacedFee + tx.getVirtualSize()) return refused(-26, `insufficient fee, rejecting replacement ${tx.txid()}; not enough additional fees to relay; ${(fee - replacedFee) / 1e8} < ${tx.getVirtualSize() / 1e8}`);
      for (const entry of conflicts) node.mempool.evictEntry(entry);
    }
    try {
      const missing = await node.mempool.addTX(tx);
      if (missing) {
        node.mempool.removeOrphan(hash);
        return refused(-25, 'bad-txns-inputs-missingorspent');
      }
      return ok(tx.txid());
    } catch (error) {
      if (!isVerifyError(error)) throw error;
      if (error.reason === 'txn-already-in-mempool') return ok(tx.txid());
      if (error.reason === 'txn-already-known') return refused(-27, 'Transaction outputs already in utxo set');
      return refused(-26, error.reason);
    }
  };

  const forward = async (method: string, params: unknown[]): Promise<RpcAnswer> => {
    const answer = await node.rpc.call({ method, params, id: 1 }, {});
    return { result: answer.result, error: answer.error };
  };

  const bridged = async (method: string, params: unknown[]): Promise<RpcAnswer> => {
    switch (method) {
      case 'sendrawtransaction':
        try {
          return await send(bcoin.TX.fromRaw(Buffer.from(String(params[0]), 'hex')));
        } catch (error) {
          return refused(-22, `TX decode failed: ${(error as Error).message}`);
        }
      case 'getrawtransaction': {
        const answer = await forward(method, params);
        return answer.error?.message === 'Transaction not found.' ? refused(-5, 'No such mempool or blockchain transaction. Use gettransaction for wallet transactions.') : answer;
      }
      case 'getblockheader': {
        const answer = await forward(method, params);
        if (answer.error || params[1] === false) return answer;
        const header = answer.result as { hash: string; height: number; confirmations: number };
        const best = await forward('getblockhash', [header.height]);
        return best.result === header.hash ? answer : ok({ ...header, confirmations: -1 });
      }
      case 'estimatesmartfee': {
        const answer = await forward(method, params);
        if (answer.error) return answer;
        const { fee, blocks } = answer.result as { fee: number; blocks: number };
        return ok(fee > 0 ? { feerate: fee, blocks } : { errors: ['Insufficient data or no feerate found'], blocks });
      }
      default:
        return forward(method, params);
    }
  };

  const authorization = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        if (request.headers.authorization !== authorization) {
          response.writeHead(401).end();
          return;
        }
        const call = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { method: string; params?: unknown[]; id: unknown };
        const answer = await bridged(call.method, call.params ?? []);
        // Core (before v28, or without "jsonrpc": "2.0") answers an error with HTTP 500, an unknown method with 404
        const status = answer.error === null ? 200 : answer.error.code === -32601 ? 404 : 500;
        response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ ...answer, id: call.id }));
      })().catch((error: unknown) => response.writeHead(500).end(JSON.stringify({ result: null, error: { code: -1, message: String(error) }, id: null })));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;

  const signPayment = (coin: Coin, to: unknown, amount: number, replaceable: boolean, fee = HARNESS_FEE_SATS) => {
    const mtx = new bcoin.MTX();
    mtx.addCoin(coin);
    mtx.addOutput(to, amount);
    mtx.addOutput(harnessAddress, coin.value - amount - fee);
    if (replaceable) mtx.inputs[0]!.sequence = 0xfffffffd;
    mtx.sign(key);
    return mtx.toTX();
  };
  const payWith = async (coin: Coin, to: unknown, amount: number, replaceable: boolean, fee = HARNESS_FEE_SATS) => {
    const tx = signPayment(coin, to, amount, replaceable, fee);
    return { tx, answer: await send(tx) };
  };

  // segwit active (the service's P2WPKH outputs spendable) and mature coins for the harness
  await mineOn(SEGWIT_HEIGHT + 10);

  return {
    url,
    rpcAuth: { user: USER, password: PASSWORD },
    node,
    mine: (count, options = {}) => mineOn(count, options),
    tip: () => node.chain.tip,
    reorg: async (parent, count, txid) => {
      const payment = payments.get(txid);
      if (!payment) throw new Error(`the harness made no payment ${txid}`);
      const tx = signPayment(payment.coin, harnessAddress, payment.amount, true, 10 * HARNESS_FEE_SATS);
      return { txid: tx.txid(), hashes: await mineOn(count, { parent, include: { tx, coin: payment.coin } }) };
    },
    pay: async (to, amount, options = {}) => {
      const index = coinbases.findIndex((entry) => entry.height <= node.chain.height - COINBASE_MATURITY);
      if (index < 0) throw new Error('the harness has no mature coin left');
      const [{ coin }] = coinbases.splice(index, 1) as [{ coin: Coin; height: number }];
      const script = bcoin.Script.fromRaw(Buffer.from(address.toOutputScript(to, networks.testnet)));
      const { tx, answer } = await payWith(coin, script, Number(amount), options.replaceable ?? false);
      payments.set(tx.txid(), { coin, to: script, amount: Number(amount) });
      return { txid: tx.txid(), answer };
    },
    rpc: async <T>(method: string, params: unknown[] = []) => {
      const answer = await bridged(method, params);
      if (answer.error) throw new Error(`${method}: ${answer.error.message} (code ${answer.error.code})`);
      return answer.result as T;
    },
    inMempool: (txid) => node.mempool.hasEntry(internalHash(txid)),
    stop: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await node.close();
    },
  };
};
