import { describe, expect, it } from 'vitest';
import { BroadcastRejectedError } from '../../../src/chains/gateway.js';
import { findChain } from '../../../src/catalog/registry.js';
import { createHttpClient } from '../../../src/chains/rpc/http.js';
import { createSigner } from '../../../src/chains/signer/signer.js';
import { signSweepTransfer } from '../../../src/chains/transfers/transactions.js';
import { createTronGateway } from '../../../src/chains/tron/gateway.js';
import { tronTransferCost } from '../../../src/chains/tron/resource-fees.js';
import { tronTransactions } from '../../../src/chains/tron/transactions.js';
import { silentLogger } from '../../../src/log.js';
import { loadFixture, replayHttp, type HttpExchange } from '../../support/node-replay.js';

const tron = findChain('tron:0x00000000000000000000000000000000')!;
const signer = createSigner('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about');
const RECEIVE_0 = 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH';
const RECEIVE_1 = 'TSeJkUh4Qv67VNFwY8LaAxERygNdy6NQZK';
const SETTLEMENT = 'TKTuTvBn4qZpeYFuXz1SuL1B94NgtK5EnT';
const USDT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const SENDER = 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8';
const BLOCK = 62913160;
const BLOCK_ID = '0000000003bffa88fc544f4963d662f0f594565926e2c25ffb18d8ffbda7198f';
const HEAD_ID = '0000000003bffa8c803e23d28fdf334677ebb7071acaa3594c5c55f8e8901d1b';
const TRX_DEPOSIT = '8d7f476b0c7ceeab895ba4465285ba5bd004694e480816fe3432f7b38ff2dbab';
const USDT_DEPOSIT = 'fe6298d5ebf25fd0e4a0efd3d2ff9bdd9eccdcb478bb5070d7c8f8939cbd8058';
const REVERTED = '543e639a2365df174a1dd60b637e247b0e2236c3381f24648d3c4c159e80e4ae';

const fixture = loadFixture<HttpExchange>('tron', 'fullnode-http');
const gatewayOver = (extra: HttpExchange[] = []) => {
  const replay = replayHttp([...extra, ...fixture.exchanges]);
  const node = createHttpClient({ endpoints: ['http://node.test'], fetch: replay.fetch, sleep: async () => {} });
  return { gateway: createTronGateway({ chain: tron, node, logger: silentLogger }), asked: replay.asked };
};

describe('Tron gateway over a full node\'s HTTP API (recorded responses)', () => {
  it('reads the head and blocks (the 32-byte block id is the hash); past the head there is none', async () => {
    const { gateway } = gatewayOver();
    expect(await gateway.head()).toEqual({ number: 62913164, hash: HEAD_ID, parentHash: expect.stringMatching(/^0000000003bffa8b/), timestamp: '2024-06-21T20:00:18.000Z' });
    expect(await gateway.block(BLOCK)).toMatchObject({ number: BLOCK, hash: BLOCK_ID, timestamp: '2024-06-21T20:00:06.000Z' });
    expect(await gateway.block(62913264)).toBeNull();
  });

  it('finds TRX transfers and TRC-20 Transfer events to watched addresses; a reverted call credits nothing', async () => {
    const { gateway } = gatewayOver();
    const transfers = await gateway.transfersInBlock(BLOCK, new Set([RECEIVE_0, RECEIVE_1]));
    const common = { blockNumber: BLOCK, blockHash: BLOCK_ID, destinationTag: null, from: SENDER };
    expect(transfers).toEqual([
      { ...common, txHash: TRX_DEPOSIT, index: 0, to: RECEIVE_0, asset: 'native', amount: 1_500_000n },
      { ...common, txHash: USDT_DEPOSIT, index: 0, to: RECEIVE_1, asset: USDT, amount: 25_000_000n },
    ]);
    expect(await gateway.transfersInBlock(BLOCK, new Set([SETTLEMENT]))).toEqual([]);
  });

  it('reads TRX and TRC-20 balances', async () => {
    const { gateway } = gatewayOver();
    expect(await gateway.balance(RECEIVE_0, 'native')).toBe(1_500_000n);
    expect(await gateway.balance(RECEIVE_1, USDT)).toBe(25_000_000n);
  });

  it('a TRX transfer the free bandwidth covers burns nothing; one past it burns its bytes; creating the recipient costs 1.1 TRX', async () => {
    const { gateway } = gatewayOver();
    expect(await gateway.estimateFee({ from: SETTLEMENT, to: RECEIVE_0, asset: 'native', amount: 1n })).toEqual({ fee: 0n, parameters: { feeLimit: '0' } });
    expect((await gateway.estimateFee({ from: RECEIVE_1, to: RECEIVE_0, asset: 'native', amount: 1n })).fee).toBe(270n * 1000n);
    expect((await gateway.estimateFee({ from: SETTLEMENT, to: 'TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL', asset: 'native', amount: 1n })).fee).toBe(1_000_000n + 100_000n);
  });

  it('a TRC-20 transfer burns the dry run\'s energy not covered by staked energy, and carries a fee limit with 20% headroom', async () => {
    const { gateway } = gatewayOver();
    expect(await gateway.estimateFee({ from: SETTLEMENT, to: RECEIVE_0, asset: USDT, amount: 10_000_000n })).toEqual({
      fee: 64_285n * 210n,
      parameters: { feeLimit: '16199820', energy: '64285' },
    });
    // 50 000 staked energy pays most of it; 100 free bytes left do not cover 345, so all 345 are burnt
    expect((await gateway.estimateFee({ from: RECEIVE_1, to: RECEIVE_0, asset: USDT, amount: 10_000_000n })).fee).toBe(14_285n * 210n + 345n * 1000n);
  });

  it('the sweeper signs a TRC-20 transfer with the estimate\'s fee limit and the head as reference block', async () => {
    const { gateway } = gatewayOver();
    const estimate = await gateway.estimateFee({ from: SETTLEMENT, to: RECEIVE_0, asset: USDT, amount: 10_000_000n });
    const step = await signSweepTransfer(signer, gateway, { chain: tron, wallet: { branch: 'settlement', index: 0 }, from: SETTLEMENT, to: RECEIVE_0, asset: USDT, amount: 10_000_000n, estimate, now: new Date('2024-06-21T20:00:20Z') });
    const signed = JSON.parse(step.raw) as { raw_data: { fee_limit: number; ref_block_hash: string } };
    expect(signed.raw_data.fee_limit).toBe(16_199_820);
    expect(signed.raw_data.ref_block_hash).toBe(HEAD_ID.slice(16, 32));
    expect(tronTransactions.decodeSignedTransaction(step.raw, { chain: tron }).transfers).toEqual([{ index: 0, from: SETTLEMENT, to: RECEIVE_0, asset: USDT, amount: 10_000_000n, destinationTag: null }]);
  });

  it('follows transactions: confirmed with the TRX burnt, failed with the node\'s reason, pending, unknown', async () => {
    const { gateway } = gatewayOver();
    expect(await gateway.transactionStatus(USDT_DEPOSIT)).toEqual({ status: 'confirmed', blockNumber: BLOCK, blockHash: BLOCK_ID, confirmations: 5, fee: 13_499_850n });
    expect(await gateway.transactionStatus(REVERTED)).toEqual({ status: 'failed', blockNumber: BLOCK, error: 'REVERT opcode executed', fee: 21_000_000n, confirmations: expect.any(Number) });
    expect(await gateway.transactionStatus('62a2fed3d6e08c44835fce71f02210b1ddabfb066e39edf1e6c261988f824dd3')).toEqual({ status: 'pending' });
    expect(await gateway.transactionStatus('b23a6a8439c0dde5515893e7c90c1e3233b8616e634470f20dc4928bcf3609bc')).toEqual({ status: 'not_found' });
  });

  describe('broadcast', () => {
    const raw = signer.signTronTransfer(tron, { branch: 'settlement', index: 0 }, {
      to: RECEIVE_0,
      amount: 1_000_000n,
      refBlock: { number: 62913164, hash: HEAD_ID },
      timestamp: 1719000020000,
      expiration: 1719000080000,
    });
    const txID = (JSON.parse(raw) as { txID: string }).txID;
    const answer = (body: object): HttpExchange => ({ request: { method: 'POST', path: '/wallet/broadcasttransaction', body: JSON.parse(raw) }, response: { status: 200, body } });
    const hex = (text: string) => Buffer.from(text).toString('hex');

    it('sends the signed JSON; a duplicate answers with the same hash', async () => {
      expect(await gatewayOver([answer({ result: true, txid: txID })]).gateway.broadcast(raw)).toEqual({ txHash: txID });
      expect(await gatewayOver([answer({ code: 'DUP_TRANSACTION_ERROR', txid: txID, message: hex('Dup transaction.') })]).gateway.broadcast(raw)).toEqual({ txHash: txID });
    });

    it('a refusal is BroadcastRejectedError with the decoded reason and how it is read; a busy node is transient', async () => {
      const refused = await gatewayOver([answer({ code: 'SIGERROR', txid: txID, message: hex('validate signature error') })]).gateway.broadcast(raw).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(BroadcastRejectedError);
      expect(refused).toMatchObject({ message: 'SIGERROR: validate signature error', refusal: 'invalid' });
      const busy = await gatewayOver([answer({ code: 'SERVER_BUSY', txid: txID, message: hex('Server busy') })]).gateway.broadcast(raw).catch((error: unknown) => error);
      expect(busy).toMatchObject({ refusal: 'transient' });
      const expired = await gatewayOver([answer({ code: 'TRANSACTION_EXPIRATION_ERROR', txid: txID, message: hex('expired') })]).gateway.broadcast(raw).catch((error: unknown) => error);
      expect(expired).toMatchObject({ refusal: 'conflict' });
      expect(await gatewayOver([answer({ code: 'DUP_TRANSACTION_ERROR', txid: txID, message: hex('dup') })]).gateway.broadcast(raw)).toEqual({ txHash: txID });
    });
  });
});

describe('Tron resource cost', () => {
  const prices = { transactionFee: 1000n, energyFee: 210n, createAccountFee: 100_000n, createNewAccountFee: 1_000_000n };
  it('staked bandwidth pays an account creation\'s bytes; the free daily bandwidth does not', () => {
    expect(tronTransferCost({ prices, resources: { NetLimit: 1000, NetUsed: 0 }, createsAccount: true }).fee).toBe(1_000_000n);
    expect(tronTransferCost({ prices, resources: { freeNetLimit: 600, freeNetUsed: 0 }, createsAccount: true }).fee).toBe(1_100_000n);
  });
});
