import { Transaction } from 'bitcoinjs-lib';
import { describe, expect, it } from 'vitest';
import { createBitcoinGateway, feeRateForTarget } from '../../../src/chains/bitcoin/gateway.js';
import { BIP125_REPLACEABLE_SEQUENCE, CannotReplaceError, replaceByFee } from '../../../src/chains/bitcoin/replace-by-fee.js';
import { bitcoinTransactions } from '../../../src/chains/bitcoin/transactions.js';
import { BroadcastRejectedError } from '../../../src/chains/gateway.js';
import { planBitcoinSpend } from '../../../src/chains/bitcoin/spend-planning.js';
import { findChain } from '../../../src/catalog/registry.js';
import { createHttpClient } from '../../../src/chains/rpc/http.js';
import { createSigner, type WalletRef } from '../../../src/chains/signer/signer.js';
import { silentLogger } from '../../../src/log.js';
import { loadFixture, replayHttp, type HttpExchange } from '../../support/node-replay.js';

const bitcoin = findChain('bip122:000000000019d6689c085ae165831e93')!;
const signer = createSigner('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about');
const RECEIVE_0 = 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu';
const RECEIVE_1 = 'bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g';
const CHANGE = 'bc1q8c6fshw2dlwun7ekn9qwf37cu2rn755upcp6el';
const RECIPIENT = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';
const BLOCK_840000 = '0000000000000000000320283a032748cef8227873ff4872689bf23f1cda83a5';
const DEPOSIT_TX = '8172f01fd2f77645bcae8869da9fcf7d4daec1dae2ce2ba5a6af102a30fd3bf7';
const MEMPOOL_TX = '3300e44ffd8093e961b4c1511def57c2b3fca3938c0fc453da4e1ad66eec7880';

const fixture = loadFixture<HttpExchange>('bitcoin', 'esplora');
const gatewayOver = (extra: HttpExchange[] = []) => {
  const replay = replayHttp([...extra, ...fixture.exchanges]);
  const esplora = createHttpClient({ endpoints: ['http://node.test'], fetch: replay.fetch, sleep: async () => {} });
  return { gateway: createBitcoinGateway({ chain: bitcoin, esplora, logger: silentLogger }), asked: replay.asked };
};
const post = (body: string, status: number, answer: string): HttpExchange => ({ request: { method: 'POST', path: '/tx', body }, response: { status, body: answer } });

describe('Bitcoin gateway over Esplora (recorded responses)', () => {
  it('reads the head and blocks; past the head there is none', async () => {
    const { gateway } = gatewayOver();
    expect(await gateway.head()).toEqual({
      number: 840002,
      hash: '00000000000000000002e9f7a4c51b5d62bd4b6a2c1b1e1c3b8d2f7a9c6e4d10',
      parentHash: '00000000000000000001b48a75d5a3077913f3f441eb7e08c13c43f768db2463',
      timestamp: '2024-04-20T00:30:00.000Z',
    });
    expect(await gateway.block(840000)).toEqual({
      number: 840000,
      hash: BLOCK_840000,
      parentHash: '0000000000000000000172014ba58d66455762add0512355ad651207918494ab',
      timestamp: '2024-04-20T00:09:27.000Z',
    });
    expect(await gateway.block(840003)).toBeNull();
  });

  it('finds the outputs paying watched addresses across every page of the block', async () => {
    const { gateway, asked } = gatewayOver();
    const transfers = await gateway.transfersInBlock(840000, new Set([RECEIVE_0, RECEIVE_1]));
    expect(transfers).toEqual([
      { txHash: DEPOSIT_TX, blockNumber: 840000, blockHash: BLOCK_840000, index: 0, from: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq', to: RECEIVE_0, asset: 'native', amount: 125000n, destinationTag: null },
      expect.objectContaining({ index: 1, from: '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa', to: RECEIVE_1, amount: 67000n }),
    ]);
    expect(asked).toContain(`GET /block/${BLOCK_840000}/txs/25`);
  });

  it('without a filter lists every output that pays an address (not OP_RETURN)', async () => {
    const { gateway } = gatewayOver();
    const transfers = await gateway.transfersInBlock(840000);
    // coinbase 1 + deposit 2 + 23 fillers × 2 + last tx 2 (its OP_RETURN output pays no one)
    expect(transfers).toHaveLength(51);
    expect(transfers[0]).toMatchObject({ from: '', to: RECIPIENT, amount: 350126516n });
    expect(await gateway.transfersInBlock(840003)).toEqual([]);
  });

  it('lists unspent outputs with their confirmations and the confirmed balance', async () => {
    const { gateway } = gatewayOver();
    expect(await gateway.unspentOutputs([RECEIVE_0, RECEIVE_1])).toEqual([
      { txHash: DEPOSIT_TX, index: 0, address: RECEIVE_0, amount: 125000n, confirmations: 3 },
      { txHash: MEMPOOL_TX, index: 1, address: RECEIVE_0, amount: 40000n, confirmations: 0 },
    ]);
    expect(await gateway.balance(RECEIVE_0, 'native')).toBe(175000n);
    expect(await gateway.nextNonce(RECEIVE_0)).toBe(0);
    expect(await gateway.requiresDestinationTag(RECEIVE_0)).toBe(false);
  });

  it('estimates the fee rate for 3 blocks and the processor selects coins with it', async () => {
    const { gateway } = gatewayOver();
    const estimate = await gateway.estimateFee({ from: CHANGE, to: RECIPIENT, asset: 'native', amount: 60_000n });
    expect(estimate).toEqual({ fee: 141n * 19n, parameters: { feeRateSatPerVbyte: '19' } });

    const outputs = (await gateway.unspentOutputs([RECEIVE_0])).filter((output) => output.confirmations >= bitcoin.properties.confirmations);
    const plan = planBitcoinSpend({
      outputs: outputs.map((output) => ({ ...output, wallet: { branch: 'receive', index: 0 } as WalletRef })),
      recipient: RECIPIENT,
      amount: 60_000n,
      feeRateSatPerVbyte: BigInt(estimate.parameters.feeRateSatPerVbyte!),
      changeAddress: CHANGE,
    });
    expect(plan.fee).toBe(2679n);
    expect(plan.outputs).toEqual([{ address: RECIPIENT, amount: 60_000n }, { address: CHANGE, amount: 125_000n - 60_000n - 2679n }]);
  });

  it('takes the estimate of the nearest target at or below the wanted one, at least 1 sat/vB', () => {
    expect(feeRateForTarget({ '1': 30.2, '6': 10.1, '144': 0.4 }, 3)).toBe(31n);
    expect(feeRateForTarget({ '2': 30.2, '6': 10.1 }, 1)).toBe(31n);
    expect(feeRateForTarget({ '144': 0.4 }, 144)).toBe(1n);
  });

  it('follows a transaction: confirmed with its fee, pending, unknown', async () => {
    const { gateway } = gatewayOver();
    expect(await gateway.transactionStatus(DEPOSIT_TX)).toEqual({ status: 'confirmed', blockNumber: 840000, blockHash: BLOCK_840000, confirmations: 3, fee: 2820n });
    expect(await gateway.transactionStatus(MEMPOOL_TX)).toEqual({ status: 'pending' });
    expect(await gateway.transactionStatus('b23a6a8439c0dde5515893e7c90c1e3233b8616e634470f20dc4928bcf3609bc')).toEqual({ status: 'not_found' });
  });
});

describe('replace-by-fee of a stuck withdrawal', () => {
  const wallet: WalletRef = { branch: 'receive', index: 0 };
  const funding = { txHash: DEPOSIT_TX, index: 0, amount: 125_000n };
  // the withdrawal went out at 2 sat/vB; the network now asks 19
  const stuck = signer.signBitcoinTransfer(bitcoin, [{ wallet, ...funding }], [
    { address: RECIPIENT, amount: 60_000n },
    { address: CHANGE, amount: 125_000n - 60_000n - 282n },
  ]);
  const spentOutput = (txHash: string, index: number) => (txHash === funding.txHash && index === funding.index ? { wallet, amount: funding.amount } : undefined);
  const previousOutput = (txHash: string, index: number) => (txHash === funding.txHash && index === funding.index ? { address: RECEIVE_0, amount: funding.amount } : undefined);

  it('spends the same inputs, pays the same recipient, a higher fee, and the node takes it', async () => {
    const pendingStuck: HttpExchange = {
      request: { method: 'GET', path: `/tx/${stuck.txHash}` },
      response: { status: 200, body: { txid: stuck.txHash, vin: [{ prevout: { scriptpubkey_address: RECEIVE_0, value: 125000 } }], vout: [{ scriptpubkey_address: RECIPIENT, value: 60000 }, { scriptpubkey_address: CHANGE, value: 64718 }], fee: 282, status: { confirmed: false } } },
    };
    const { gateway: before } = gatewayOver([pendingStuck]);
    expect(await before.transactionStatus(stuck.txHash)).toEqual({ status: 'pending' });
    const rate = BigInt((await before.estimateFee({ from: CHANGE, to: RECIPIENT, asset: 'native', amount: 60_000n })).parameters.feeRateSatPerVbyte!);

    const replacement = replaceByFee(signer, { chain: bitcoin, raw: stuck.raw, spentOutput, changeAddress: CHANGE, feeRateSatPerVbyte: rate });

    const original = bitcoinTransactions.decodeSignedTransaction(stuck.raw, { chain: bitcoin, previousOutput });
    const replaced = bitcoinTransactions.decodeSignedTransaction(replacement.raw, { chain: bitcoin, previousOutput });
    expect(replaced.spends).toEqual(original.spends);
    expect(replaced.transfers.find((transfer) => transfer.to === RECIPIENT)?.amount).toBe(60_000n);
    expect(original.fee).toBe(282n);
    const virtualSize = BigInt(Transaction.fromHex(stuck.raw).virtualSize());
    expect(replaced.fee).toBe(virtualSize * 19n);
    expect(replacement.fee).toBe(replaced.fee);
    expect(replaced.fee).toBeGreaterThanOrEqual(original.fee + virtualSize); // BIP125 rule 4
    expect(replaced.transfers.find((transfer) => transfer.to === CHANGE)?.amount).toBe(125_000n - 60_000n - replaced.fee);
    expect(Transaction.fromHex(replacement.raw).ins.map((input) => input.sequence)).toEqual([BIP125_REPLACEABLE_SEQUENCE]);
    expect(replacement.txHash).not.toBe(stuck.txHash);

    const { gateway: after, asked } = gatewayOver([post(replacement.raw, 200, replacement.txHash)]);
    expect(await after.broadcast(replacement.raw)).toEqual({ txHash: replacement.txHash });
    expect(asked).toEqual(['POST /tx']);
  });

  it('BIP125 rule 4 counts the replacement\'s own size: a replacement whose signature came out a byte longer pays for that byte too', () => {
    // found by search: the original's signature is 71 bytes (140 vB), the first replacement's 72 (141 vB)
    const shorter = signer.signBitcoinTransfer(bitcoin, [{ wallet, ...funding, sequence: BIP125_REPLACEABLE_SEQUENCE }], [
      { address: RECIPIENT, amount: 60_000n },
      { address: CHANGE, amount: 125_000n - 60_000n - 335n },
    ]);
    expect(Transaction.fromHex(shorter.raw).virtualSize()).toBe(140);
    const replacement = replaceByFee(signer, { chain: bitcoin, raw: shorter.raw, spentOutput, changeAddress: CHANGE, feeRateSatPerVbyte: 1n });
    const replacementSize = BigInt(Transaction.fromHex(replacement.raw).virtualSize());
    expect(replacementSize).toBe(141n);
    expect(replacement.replacedFee).toBe(335n);
    expect(replacement.fee - replacement.replacedFee).toBeGreaterThanOrEqual(replacementSize); // what Core asks: else "insufficient fee"
  });

  it('a bump the change cannot pay is refused, as is a transaction spending foreign outputs', () => {
    expect(() => replaceByFee(signer, { chain: bitcoin, raw: stuck.raw, spentOutput, changeAddress: CHANGE, feeRateSatPerVbyte: 1_000n })).toThrow(CannotReplaceError);
    expect(() => replaceByFee(signer, { chain: bitcoin, raw: stuck.raw, spentOutput: () => undefined, changeAddress: CHANGE, feeRateSatPerVbyte: 19n })).toThrow(/not one of the organization's/);
    expect(() => replaceByFee(signer, { chain: bitcoin, raw: stuck.raw, spentOutput, changeAddress: RECEIVE_1, feeRateSatPerVbyte: 19n })).toThrow(/no change output/);
  });

  it('a node that already has the transaction answers with its hash; a refusal is BroadcastRejectedError', async () => {
    const known = post(stuck.raw, 400, 'sendrawtransaction RPC error: {"code":-27,"message":"Transaction already in block chain"}');
    expect(await gatewayOver([known]).gateway.broadcast(stuck.raw)).toEqual({ txHash: stuck.txHash });
    const refused = post(stuck.raw, 400, 'sendrawtransaction RPC error: {"code":-26,"message":"insufficient fee, rejecting replacement"}');
    const failure = await gatewayOver([refused]).gateway.broadcast(stuck.raw).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(BroadcastRejectedError);
    expect((failure as Error).message).toContain('insufficient fee');
  });
});
