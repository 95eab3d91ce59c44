import { describe, expect, it } from 'vitest';
import { createBitcoinGateway } from '../../../src/chains/bitcoin/gateway.js';
import { BIP125_REPLACEABLE_SEQUENCE, replaceByFee } from '../../../src/chains/bitcoin/replace-by-fee.js';
import { parseChainsConfig } from '../../../src/chains/config.js';
import { followRecorded } from '../../../src/chains/transfers/follow.js';
import { replaceAfterBlocksOf } from '../../../src/processes/withdrawal-processor/index.js';
import { isStuck } from '../../../src/processes/withdrawal-processor/replacement.js';
import { findChain } from '../../../src/catalog/registry.js';
import { createHttpClient } from '../../../src/chains/rpc/http.js';
import { createSigner, type WalletRef } from '../../../src/chains/signer/signer.js';
import { silentLogger } from '../../../src/log.js';
import { loadFixture, replayHttp, type HttpExchange } from '../../support/node-replay.js';

const bitcoin = findChain('bip122:000000000019d6689c085ae165831e93')!;
const signer = createSigner('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about');
const RECEIVE_0 = 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu';
const CHANGE = 'bc1q8c6fshw2dlwun7ekn9qwf37cu2rn755upcp6el';
const RECIPIENT = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';
const BLOCK_840000 = '0000000000000000000320283a032748cef8227873ff4872689bf23f1cda83a5';
/** confirmed in block 840000 of the fixture (tip 840002), paying RECEIVE_0 125 000 sat at output 0 */
const DEPOSIT_TX = '8172f01fd2f77645bcae8869da9fcf7d4daec1dae2ce2ba5a6af102a30fd3bf7';

const fixture = loadFixture<HttpExchange>('bitcoin', 'esplora');
const gatewayOver = (exchanges: HttpExchange[]) => {
  const replay = replayHttp([...exchanges, ...fixture.exchanges]);
  const esplora = createHttpClient({ endpoints: ['http://node.test'], fetch: replay.fetch, sleep: async () => {} });
  return { services: { gateway: createBitcoinGateway({ chain: bitcoin, esplora, logger: silentLogger }), chain: bitcoin, logger: silentLogger }, asked: replay.asked };
};

// the withdrawal as the processor signed it (BIP125-signalling, 2 sat/vB), and its replacement at the fixture's 19 sat/vB
const wallet: WalletRef = { branch: 'receive', index: 0 };
const original = signer.signBitcoinTransfer(
  bitcoin,
  [{ wallet, txHash: DEPOSIT_TX, index: 0, amount: 125_000n, sequence: BIP125_REPLACEABLE_SEQUENCE }],
  [
    { address: RECIPIENT, amount: 60_000n },
    { address: CHANGE, amount: 125_000n - 60_000n - 282n },
  ],
);
const replacement = replaceByFee(signer, {
  chain: bitcoin,
  raw: original.raw,
  spentOutput: (txHash, index) => (txHash === DEPOSIT_TX && index === 0 ? { wallet, amount: 125_000n } : undefined),
  changeAddress: CHANGE,
  feeRateSatPerVbyte: 19n,
});
const recorded = { current: { ...replacement, nonce: null }, replaced: [{ ...original, nonce: null }] };

const esploraTx = (txid: string, fee: number, status: object): HttpExchange => ({
  request: { method: 'GET', path: `/tx/${txid}` },
  response: {
    status: 200,
    body: { txid, vin: [{ prevout: { scriptpubkey_address: RECEIVE_0, value: 125000 } }], vout: [{ scriptpubkey_address: RECIPIENT, value: 60000 }, { scriptpubkey_address: CHANGE, value: 125000 - 60000 - fee }], fee, status },
  },
});
const unknown = (txid: string): HttpExchange => ({ request: { method: 'GET', path: `/tx/${txid}` }, response: { status: 404, body: 'Transaction not found' } });
const outspend = (answer: object): HttpExchange => ({ request: { method: 'GET', path: `/tx/${DEPOSIT_TX}/outspend/0` }, response: { status: 200, body: answer } });
const unspent = outspend({ spent: false });
const postTx = (raw: string, status: number, body: string): HttpExchange => ({ request: { method: 'POST', path: '/tx', body: raw }, response: { status, body } });
const follow = (exchanges: HttpExchange[]) => {
  const { services, asked } = gatewayOver(exchanges);
  return { followed: followRecorded(services, { current: recorded.current, replaced: recorded.replaced, purpose: 'withdrawal' }), asked };
};

describe('following a replaced Bitcoin withdrawal over Esplora (recorded responses)', () => {
  it('a replacement recorded but never sent (a crash) is sent, as recorded, while the original waits in the mempool', async () => {
    const { followed, asked } = follow([unknown(replacement.txHash), esploraTx(original.txHash, 282, { confirmed: false }), postTx(replacement.raw, 200, replacement.txHash)]);
    expect(await followed).toEqual({ kind: 'sent', inMempool: false });
    expect(asked).toEqual([`GET /tx/${replacement.txHash}`, `GET /tx/${original.txHash}`, 'POST /tx']);
  });

  it('a node that already has the replacement answers with its hash: sent', async () => {
    const known = postTx(replacement.raw, 400, 'sendrawtransaction RPC error: {"code":-27,"message":"Transaction already in block chain"}');
    const { followed } = follow([unknown(replacement.txHash), unknown(original.txHash), unspent, known]);
    expect(await followed).toEqual({ kind: 'sent', inMempool: false });
  });

  it('a replacement the node refuses leaves the original to be followed, never a failure while it can still pay', async () => {
    const refused = postTx(replacement.raw, 400, 'sendrawtransaction RPC error: {"code":-26,"message":"insufficient fee, rejecting replacement"}');
    const { followed, asked } = follow([unknown(replacement.txHash), esploraTx(original.txHash, 282, { confirmed: false }), refused]);
    expect(await followed).toEqual({ kind: 'sent', inMempool: true });
    expect(asked.filter((request) => request === 'POST /tx')).toHaveLength(1); // the original is in the mempool: not sent again
  });

  it('the original mined first (a race) is the payment: confirmed with its own hash and fee, nothing sent', async () => {
    const { followed, asked } = follow([unknown(replacement.txHash), esploraTx(original.txHash, 282, { confirmed: true, block_height: 840000, block_hash: BLOCK_840000 })]);
    expect(await followed).toEqual({ kind: 'confirmed', txHash: original.txHash, blockNumber: 840000, fee: 282n });
    expect(asked).not.toContain('POST /tx');
  });

  it('the replacement in the mempool is waited on (what the rule counts blocks for); mined, it completes the withdrawal', async () => {
    expect(await follow([esploraTx(replacement.txHash, Number(replacement.fee), { confirmed: false })]).followed).toEqual({ kind: 'sent', inMempool: true });
    const mined = esploraTx(replacement.txHash, Number(replacement.fee), { confirmed: true, block_height: 840001, block_hash: '00000000000000000001b48a75d5a3077913f3f441eb7e08c13c43f768db2463' });
    expect(await follow([mined]).followed).toEqual({ kind: 'confirmed', txHash: replacement.txHash, blockNumber: 840001, fee: replacement.fee });
  });

  it('both gone and refused as spent while nothing we know spent their input: unknown, followed again, never failed', async () => {
    const refused = postTx(replacement.raw, 400, 'sendrawtransaction RPC error: {"code":-25,"message":"bad-txns-inputs-missingorspent"}');
    const originalRefused = postTx(original.raw, 400, 'sendrawtransaction RPC error: {"code":-25,"message":"bad-txns-inputs-missingorspent"}');
    const { followed } = follow([unknown(replacement.txHash), unknown(original.txHash), unspent, refused, originalRefused]);
    expect(await followed).toEqual({ kind: 'sent', inMempool: false });
  });

  it('both gone, their input spent by another transaction 3 blocks deep: it can never be mined, the withdrawal fails', async () => {
    const rival = 'ab'.repeat(32);
    const spentElsewhere = outspend({ spent: true, txid: rival, vin: 0, status: { confirmed: true, block_height: 840000 } });
    const { followed, asked } = follow([unknown(replacement.txHash), unknown(original.txHash), spentElsewhere]);
    expect(await followed).toEqual({ kind: 'failed', error: `it can never be mined: its input ${DEPOSIT_TX}:0 was spent by ${rival}, ${bitcoin.properties.confirmations} blocks deep`, feePaid: 0n });
    expect(asked).not.toContain('POST /tx');
  });

  it('their input spent by another transaction not yet deep enough: still followed', async () => {
    const shallow = outspend({ spent: true, txid: 'ab'.repeat(32), vin: 0, status: { confirmed: true, block_height: 840002 } });
    const refused = postTx(replacement.raw, 400, 'sendrawtransaction RPC error: {"code":-25,"message":"bad-txns-inputs-missingorspent"}');
    const originalRefused = postTx(original.raw, 400, 'sendrawtransaction RPC error: {"code":-25,"message":"bad-txns-inputs-missingorspent"}');
    const { followed } = follow([unknown(replacement.txHash), unknown(original.txHash), shallow, refused, originalRefused]);
    expect(bitcoin.properties.confirmations).toBeGreaterThan(1);
    expect(await followed).toEqual({ kind: 'sent', inMempool: false });
  });
});

describe('the replace-by-fee rule', () => {
  const signed = { raw: original.raw, txHash: original.txHash, nonce: null, fee: '282', signedAt: '2026-11-22T10:00:00.000Z', headBlockNumber: 840000, inputs: [{ txHash: DEPOSIT_TX, index: 0, address: RECEIVE_0, amount: '125000' }] };

  it('counts blocks from the head the transaction was signed at; one recorded without them is never replaced', () => {
    expect(isStuck(signed, 840005, 6)).toBe(false);
    expect(isStuck(signed, 840006, 6)).toBe(true);
    const { headBlockNumber: _head, ...withoutHead } = signed;
    expect(isStuck(withoutHead, 900000, 6)).toBe(false);
  });

  it('reads a Bitcoin chain’s fees.replaceAfterBlocks from CHAINS_CONFIG, which refuses a value that is not a whole number of blocks', () => {
    const configWith = (fees: Record<string, number>) => parseChainsConfig({ chains: { [bitcoin.id]: { rpcUrls: ['https://blockstream.info/api'], fees } } });
    expect(replaceAfterBlocksOf(configWith({ replaceAfterBlocks: 3 }), bitcoin)).toBe(3);
    expect(replaceAfterBlocksOf(configWith({}), bitcoin)).toBeUndefined();
    expect(replaceAfterBlocksOf(null, bitcoin)).toBeUndefined();
    expect(() => configWith({ replaceAfterBlocks: 0.5 })).toThrow(/replaceAfterBlocks/);
    expect(() => configWith({ replaceAfterBlocks: 0 })).toThrow(/replaceAfterBlocks/);
  });
});
