import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { bitcoinCoreAuthorization, createBitcoinCoreGateway } from '../../../src/chains/bitcoin/core-rpc-gateway.js';
import { BroadcastRejectedError } from '../../../src/chains/gateway.js';
import { createHttpClient, type FetchLike } from '../../../src/chains/rpc/http.js';
import { createSigner } from '../../../src/chains/signer/signer.js';
import { findChain } from '../../../src/catalog/registry.js';
import { createLogger } from '../../../src/log.js';

const bitcoin = findChain('bip122:000000000019d6689c085ae165831e93')!;
const signer = createSigner('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about');
const signed = signer.signBitcoinTransfer(bitcoin, [{ wallet: { branch: 'receive', index: 0 }, txHash: 'ab'.repeat(32), index: 0, amount: 100_000n, sequence: 0xfffffffd }], [
  { address: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', amount: 90_000n },
]);

/** Bitcoin Core's answer to one call: a result, or an error as Core sends it (HTTP 500; 404 for an unknown method) */
type Answer = { result: unknown } | { error: { code: number; message: string } };

/** a node that answers the calls it is given (method and params), and fails the test on any other */
const coreNode = (answers: [method: string, params: unknown[], answer: Answer][]) => {
  const asked: string[] = [];
  const headers: Record<string, string>[] = [];
  const fetch: FetchLike = async (_url, init) => {
    const call = JSON.parse(init.body!) as { method: string; params: unknown[]; id: unknown };
    asked.push(call.method);
    headers.push(init.headers);
    const found = answers.find(([method, params]) => method === call.method && isDeepStrictEqual(params, call.params));
    if (!found) throw new Error(`no answer for ${call.method} ${JSON.stringify(call.params)}`);
    const answer = found[2];
    const status = 'result' in answer ? 200 : answer.error.code === -32601 ? 404 : 500;
    return { status, text: async () => JSON.stringify({ result: null, error: null, ...answer, id: call.id }) };
  };
  return { fetch, asked, headers };
};

const gatewayOver = (node: ReturnType<typeof coreNode>, options: { fees?: { minFeeRateSatPerVbyte?: number; feeTargetBlocks?: number }; headers?: () => Record<string, string> } = {}) => {
  const warnings: string[] = [];
  const logger = createLogger('debug', {}, (line) => {
    if (line.includes('"level":"warn"')) warnings.push(line);
  });
  const client = createHttpClient({ endpoints: ['http://bitcoind.test:8332'], fetch: node.fetch, sleep: async () => {}, ...(options.headers ? { headers: options.headers } : {}) });
  const gateway = createBitcoinCoreGateway({ chain: bitcoin, node: client, ownOutputs: async () => [], logger, fees: options.fees ?? {} });
  return { gateway, warnings };
};
const refusalOf = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (error: unknown) => (error instanceof BroadcastRejectedError ? { refusal: error.refusal, message: error.message } : error),
  );

describe('Bitcoin gateway over Bitcoin Core JSON-RPC (scripted answers in Core\'s shapes)', () => {
  it('testmempoolaccept refuses: the refusal is read from its reject-reason and nothing is sent', async () => {
    const node = coreNode([['testmempoolaccept', [[signed.raw]], { result: [{ txid: signed.txHash, allowed: false, 'reject-reason': 'txn-mempool-conflict' }] }]]);
    const { gateway } = gatewayOver(node);
    expect(await refusalOf(gateway.broadcast(signed.raw))).toEqual({ refusal: 'conflict', message: 'testmempoolaccept: txn-mempool-conflict' });
    expect(node.asked).toEqual(['testmempoolaccept']);
  });

  it('testmempoolaccept says it is known already: its hash, nothing sent', async () => {
    const node = coreNode([['testmempoolaccept', [[signed.raw]], { result: [{ txid: signed.txHash, allowed: false, 'reject-reason': 'txn-already-known' }] }]]);
    expect(await gatewayOver(node).gateway.broadcast(signed.raw)).toEqual({ txHash: signed.txHash });
    expect(node.asked).toEqual(['testmempoolaccept']);
  });

  it('accepted by testmempoolaccept, then sent; sendrawtransaction\'s own refusals are read by code and reason', async () => {
    const accepted: Answer = { result: [{ txid: signed.txHash, allowed: true }] };
    const sent = coreNode([['testmempoolaccept', [[signed.raw]], accepted], ['sendrawtransaction', [signed.raw], { result: signed.txHash }]]);
    expect(await gatewayOver(sent).gateway.broadcast(signed.raw)).toEqual({ txHash: signed.txHash });
    expect(sent.asked).toEqual(['testmempoolaccept', 'sendrawtransaction']);
    const cases: [Answer, unknown][] = [
      [{ error: { code: -26, message: 'mempool min fee not met, 110 < 141' } }, { refusal: 'transient', message: 'sendrawtransaction: mempool min fee not met, 110 < 141 (code -26)' }],
      [{ error: { code: -25, message: 'bad-txns-inputs-missingorspent' } }, { refusal: 'conflict', message: 'sendrawtransaction: bad-txns-inputs-missingorspent (code -25)' }],
      [{ error: { code: -25, message: 'Fee exceeds maximum configured by user (e.g. -maxtxfee, maxfeerate)' } }, expect.objectContaining({ refusal: 'invalid' })],
      [{ error: { code: -27, message: 'Transaction outputs already in utxo set' } }, null],
    ];
    for (const [answer, expected] of cases) {
      const node = coreNode([['testmempoolaccept', [[signed.raw]], accepted], ['sendrawtransaction', [signed.raw], answer]]);
      expect(await refusalOf(gatewayOver(node).gateway.broadcast(signed.raw))).toEqual(expected);
    }
  });

  it('a node without testmempoolaccept: said once, then every transaction is sent without it', async () => {
    const node = coreNode([
      ['testmempoolaccept', [[signed.raw]], { error: { code: -32601, message: 'Method not found' } }],
      ['sendrawtransaction', [signed.raw], { result: signed.txHash }],
    ]);
    const { gateway, warnings } = gatewayOver(node);
    expect(await gateway.broadcast(signed.raw)).toEqual({ txHash: signed.txHash });
    expect(await gateway.broadcast(signed.raw)).toEqual({ txHash: signed.txHash });
    expect(node.asked).toEqual(['testmempoolaccept', 'sendrawtransaction', 'sendrawtransaction']);
    expect(warnings).toEqual([expect.stringContaining('the node has no testmempoolaccept')]);
  });

  it('estimatesmartfee: BTC/kvB to whole sat/vB (rounded up); no estimate yet: the policy\'s minimum, else an error', async () => {
    const node = coreNode([
      ['estimatesmartfee', [3], { result: { feerate: 0.00012345, blocks: 3 } }],
      ['estimatesmartfee', [6], { result: { errors: ['Insufficient data or no feerate found'], blocks: 0 } }],
    ]);
    expect((await gatewayOver(node).gateway.estimateFee({ from: '', to: '', asset: 'native', amount: 0n })).parameters).toEqual({ feeRateSatPerVbyte: '13' });
    expect((await gatewayOver(node, { fees: { feeTargetBlocks: 6, minFeeRateSatPerVbyte: 2 } }).gateway.estimateFee({ from: '', to: '', asset: 'native', amount: 0n })).parameters).toEqual({ feeRateSatPerVbyte: '2' });
    await expect(gatewayOver(node, { fees: { feeTargetBlocks: 6 } }).gateway.estimateFee({ from: '', to: '', asset: 'native', amount: 0n })).rejects.toThrow(/no fee estimate for 6 blocks \(Insufficient data or no feerate found\)/);
  });

  it('a transaction the node does not know (-5) is not_found; one in its mempool (no block) pending', async () => {
    const node = coreNode([
      ['getrawtransaction', ['aa'.repeat(32), true], { error: { code: -5, message: 'No such mempool or blockchain transaction. Use gettransaction for wallet transactions.' } }],
      ['getrawtransaction', [signed.txHash, true], { result: { txid: signed.txHash, hex: signed.raw } }],
    ]);
    const { gateway } = gatewayOver(node);
    expect(await gateway.transactionStatus('aa'.repeat(32))).toEqual({ status: 'not_found' });
    expect(await gateway.transactionStatus(signed.txHash)).toEqual({ status: 'pending' });
  });

  it('credentials: Basic over user and password, or over the cookie file as it is at each request', async () => {
    expect(bitcoinCoreAuthorization({ user: 'ledgergate', password: 'secret' })()).toEqual({ authorization: `Basic ${Buffer.from('ledgergate:secret').toString('base64')}` });
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ledgergate-cookie-'));
    try {
      const cookieFile = path.join(dir, '.cookie');
      await fs.writeFile(cookieFile, '__cookie__:first\n');
      const node = coreNode([['getblockcount', [], { result: 7 }]]);
      const client = createHttpClient({ endpoints: ['http://bitcoind.test:8332'], fetch: node.fetch, headers: bitcoinCoreAuthorization({ cookieFile }) });
      await client.call('getblockcount');
      await fs.writeFile(cookieFile, '__cookie__:after-a-restart\n');
      await client.call('getblockcount');
      expect(node.headers.map((sent) => Buffer.from(sent.authorization!.replace('Basic ', ''), 'base64').toString())).toEqual(['__cookie__:first', '__cookie__:after-a-restart']);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
