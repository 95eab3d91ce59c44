import { describe, expect, it } from 'vitest';
import { hashes } from 'xrpl';
import { checkDestinationTag } from '../../../src/application/withdrawal-checks.js';
import { BroadcastRejectedError } from '../../../src/chains/gateway.js';
import { bitcoinTronXrpGatewayFactories } from '../../../src/chains/node-gateways.js';
import { findChain } from '../../../src/catalog/registry.js';
import { RpcExhaustedError } from '../../../src/chains/rpc/failover.js';
import type { FetchLike } from '../../../src/chains/rpc/http.js';
import { createSigner } from '../../../src/chains/signer/signer.js';
import { createXrpGateway } from '../../../src/chains/xrp/gateway.js';
import { createXrplRequester } from '../../../src/chains/xrp/requester.js';
import { createLogger, silentLogger } from '../../../src/log.js';
import { loadFixture, replayHttp, replayXrpl, type HttpExchange, type XrplExchange } from '../../support/node-replay.js';

const xrp = findChain('xrpl:mainnet')!;
const signer = createSigner('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about');
const DEPOSIT_ADDRESS = 'rHsMGQEkVNJmpGWs8XUBoTBiAAbwxZN5v3';
const SENDER = 'rf1BiGeXwwQoi8Z2ueFYTEXSwuJYfV2Jpn';
const NEW_ACCOUNT = 'rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe';
const LEDGER = 90000000;
const LEDGER_HASH = '499945A50A30476C0AAE02962D55E700D124A12D4EB10222DB5D20D3C8B64A8C';
const HEAD_HASH = 'D3DF3FB30984831B955279E1DC9703CE363B2E3394B60D6D07889521220E546E';
const PLAIN = 'A116C9ED46D6207734A43317D30FD88F52AC8634C37D904BBF4E41D865F90475';
const PARTIAL = '9834A14AB9BCAA0F6A8DA71073617EAC8F004E596A3FA11D807B84631B825D9D';
const UNAVAILABLE = 'BA691BA042BCEDD9A61A36F5969026BC95859DCCDC7E47F24E6BCE35673BAF2F';
const UNFUNDED = 'F75CDE7B151DD5E116680F4A239364A82C04F77E679C1F618A69FB1F59166B87';

const fixture = loadFixture<XrplExchange>('xrp', 'rippled');
const gatewayOver = (extra: XrplExchange[] = [], options: { maxFeeDrops?: bigint; lines?: Record<string, unknown>[] } = {}) => {
  const replay = replayXrpl([...extra, ...fixture.exchanges]);
  const logger = options.lines ? createLogger('debug', {}, (line) => options.lines!.push(JSON.parse(line) as Record<string, unknown>)) : silentLogger;
  return { gateway: createXrpGateway({ chain: xrp, request: replay.request, logger, ...(options.maxFeeDrops ? { maxFeeDrops: options.maxFeeDrops } : {}) }), asked: replay.asked };
};

describe('XRP gateway over rippled (recorded responses)', () => {
  it('the head is the latest validated ledger; a closed but unvalidated one and a future one are not visible', async () => {
    const { gateway } = gatewayOver();
    expect(await gateway.head()).toEqual({ number: 90000005, hash: HEAD_HASH, parentHash: expect.any(String), timestamp: '2024-06-25T08:00:20.000Z' });
    expect(await gateway.block(LEDGER)).toEqual({ number: LEDGER, hash: LEDGER_HASH, parentHash: expect.any(String), timestamp: '2024-06-25T08:00:00.000Z' });
    expect(await gateway.block(90000006)).toBeNull();
    expect(await gateway.block(90000007)).toBeNull();
    expect(await gateway.transfersInBlock(90000007)).toEqual([]);
  });

  it('credits delivered_amount, never Amount: a partial payment counts for what it delivered', async () => {
    const lines: Record<string, unknown>[] = [];
    const { gateway } = gatewayOver([], { lines });
    const transfers = await gateway.transfersInBlock(LEDGER, new Set([DEPOSIT_ADDRESS]));
    const common = { blockNumber: LEDGER, blockHash: LEDGER_HASH, index: 0, from: SENDER, to: DEPOSIT_ADDRESS, asset: 'native' };
    // the partial payment's DeliverMax says 1000 XRP; 1.5 XRP arrived. The unfunded (tec) payment and the USD payment credit nothing.
    expect(transfers).toEqual([
      { ...common, txHash: PLAIN, amount: 25_000_000n, destinationTag: 12345 },
      { ...common, txHash: PARTIAL, amount: 1_500_000n, destinationTag: 777 },
    ]);
    expect(transfers.some((transfer) => transfer.txHash === UNFUNDED)).toBe(false);
    expect(lines).toEqual([expect.objectContaining({ level: 'warn', msg: 'xrp: payment without delivered_amount not credited', txHash: UNAVAILABLE, ledger: LEDGER })]);
  });

  it('reads the API v1 shape too (flat fields, metaData)', async () => {
    const { gateway } = gatewayOver();
    expect(await gateway.transfersInBlock(LEDGER + 1)).toEqual([
      expect.objectContaining({ txHash: '0B792E2D79B5AB596E73936BA316E96595BA874DD321A36F82D20EF2F7E46022', to: DEPOSIT_ADDRESS, amount: 2_500_000n, destinationTag: 777 }),
    ]);
  });

  it('the spendable balance leaves the account reserve (base + owner reserve × OwnerCount)', async () => {
    const { gateway } = gatewayOver();
    expect(await gateway.balance(DEPOSIT_ADDRESS, 'native')).toBe(125_000_000n - 1_000_000n - 2n * 200_000n);
    expect(await gateway.balance(SENDER, 'native')).toBe(20_000_000n - 1_000_000n);
    expect(await gateway.balance(NEW_ACCOUNT, 'native')).toBe(0n);
  });

  it('RequireDest comes from account_info Flags, and a withdrawal without a tag is MISSING_DESTINATION_TAG', async () => {
    const { gateway } = gatewayOver();
    expect(await gateway.requiresDestinationTag(DEPOSIT_ADDRESS)).toBe(true);
    expect(await gateway.requiresDestinationTag(SENDER)).toBe(false);
    expect(await gateway.requiresDestinationTag(NEW_ACCOUNT)).toBe(false);
    await expect(checkDestinationTag(xrp, gateway, DEPOSIT_ADDRESS, null)).rejects.toMatchObject({ code: 'MISSING_DESTINATION_TAG' });
    await expect(checkDestinationTag(xrp, gateway, DEPOSIT_ADDRESS, '12345')).resolves.toBeUndefined();
    await expect(checkDestinationTag(xrp, gateway, SENDER, null)).resolves.toBeUndefined();
  });

  it('the next sequence counts the transactions waiting in the queue', async () => {
    const { gateway } = gatewayOver();
    expect(await gateway.nextNonce(DEPOSIT_ADDRESS)).toBe(93);
    expect(await gateway.nextNonce(SENDER)).toBe(106);
  });

  it('the fee is the open ledger\'s, within the ceiling', async () => {
    expect(await gatewayOver().gateway.estimateFee({ from: DEPOSIT_ADDRESS, to: SENDER, asset: 'native', amount: 1n })).toEqual({ fee: 12n, parameters: { fee: '12' } });
    expect((await gatewayOver([], { maxFeeDrops: 11n }).gateway.estimateFee({ from: DEPOSIT_ADDRESS, to: SENDER, asset: 'native', amount: 1n })).fee).toBe(11n);
  });

  it('follows transactions: validated success, tec failure with its fee, not yet validated, unknown', async () => {
    const { gateway } = gatewayOver();
    expect(await gateway.transactionStatus(PARTIAL)).toEqual({ status: 'confirmed', blockNumber: LEDGER, blockHash: LEDGER_HASH, confirmations: 6, fee: 12n });
    expect(await gateway.transactionStatus(UNFUNDED)).toEqual({ status: 'failed', blockNumber: LEDGER, error: 'tecUNFUNDED_PAYMENT', fee: 12n, confirmations: expect.any(Number) });
    expect(await gateway.transactionStatus('D36BE6494248EE06AC18F38EA1119DFE4699FDCFCBBCC30A2E4F1CCBCE68DFAC')).toEqual({ status: 'pending' });
    expect(await gateway.transactionStatus('B23A6A8439C0DDE5515893E7C90C1E3233B8616E634470F20DC4928BCF3609BC')).toEqual({ status: 'not_found' });
  });

  describe('broadcast', () => {
    const blob = signer.signXrpPayment(xrp, { branch: 'receive', index: 0 }, { destination: SENDER, amountDrops: 1_000_000n, destinationTag: 5, fee: 12n, sequence: 93, lastLedgerSequence: 90001005 });
    const hash = hashes.hashSignedTx(blob);
    const submitted = (engine_result: string): XrplExchange => ({ request: { command: 'submit', tx_blob: blob }, response: { result: { engine_result, engine_result_code: 0, engine_result_message: `${engine_result} message`, tx_blob: blob, tx_json: { hash } } } });

    it('applied, queued and fee-claimed results return the hash', async () => {
      for (const result of ['tesSUCCESS', 'terQUEUED', 'tecNO_DST_INSUF_XRP', 'tefALREADY']) {
        expect(await gatewayOver([submitted(result)]).gateway.broadcast(blob), result).toEqual({ txHash: hash });
      }
    });

    it('a used sequence is a conflict: by this transaction or another, the validated ledger says which', async () => {
      await expect(gatewayOver([submitted('tefPAST_SEQ')]).gateway.broadcast(blob)).rejects.toMatchObject({ refusal: 'conflict' });
      expect(await gatewayOver([submitted('terQUEUED')]).gateway.broadcast(blob)).toEqual({ txHash: hash });
      expect(await gatewayOver([submitted('tecUNFUNDED_PAYMENT')]).gateway.broadcast(blob)).toEqual({ txHash: hash });
    });

    it('malformed and local refusals are BroadcastRejectedError', async () => {
      await expect(gatewayOver([submitted('temBAD_AMOUNT')]).gateway.broadcast(blob)).rejects.toThrow('temBAD_AMOUNT: temBAD_AMOUNT message');
      await expect(gatewayOver([submitted('telINSUF_FEE_P')]).gateway.broadcast(blob)).rejects.toMatchObject({ refusal: 'transient' });
      await expect(gatewayOver([submitted('temBAD_AMOUNT')]).gateway.broadcast(blob)).rejects.toMatchObject({ refusal: 'invalid' });
      const invalid: XrplExchange = { request: { command: 'submit', tx_blob: blob }, response: { error: 'invalidTransaction', error_message: 'fails local checks' } };
      await expect(gatewayOver([invalid]).gateway.broadcast(blob)).rejects.toBeInstanceOf(BroadcastRejectedError);
    });
  });
});

describe('rippled failover', () => {
  const immediate = { sleep: async () => {}, startTimer: () => () => {} };

  it('a busy or disconnected server hands the request to the next; a rippled error answer is final', async () => {
    const { request: recorded } = replayXrpl(fixture.exchanges);
    const asked: string[] = [];
    const busy = replayXrpl([{ request: { command: 'fee' }, response: { error: 'tooBusy', error_message: 'The server is too busy to help you now.' } }]);
    const request = createXrplRequester(
      [
        { name: 'busy', request: (command) => (asked.push('busy'), busy.request(command)) },
        { name: 'healthy', request: (command) => (asked.push('healthy'), recorded(command)) },
      ],
      immediate,
    );
    const gateway = createXrpGateway({ chain: xrp, request, logger: silentLogger });
    expect((await gateway.estimateFee({ from: DEPOSIT_ADDRESS, to: SENDER, asset: 'native', amount: 1n })).fee).toBe(12n);
    expect(asked).toEqual(['busy', 'healthy']);
    // txnNotFound is an answer, not an outage: asked once, on the server now preferred
    expect(await gateway.transactionStatus('B23A6A8439C0DDE5515893E7C90C1E3233B8616E634470F20DC4928BCF3609BC')).toEqual({ status: 'not_found' });
    expect(asked).toEqual(['busy', 'healthy', 'healthy']);
  });

  it('gives up when no server answers', async () => {
    const down = replayXrpl([{ request: { command: 'fee' }, response: { error: 'noNetwork', error_message: 'Not synced to the network.' } }]);
    const request = createXrplRequester([{ name: 'a', request: down.request }, { name: 'b', request: down.request }], { ...immediate, maxAttempts: 3 });
    await expect(request({ command: 'fee' })).rejects.toBeInstanceOf(RpcExhaustedError);
    expect(down.asked).toHaveLength(3);
  });
});

describe('XRP over rippled\'s JSON-RPC (HTTP), as CHAINS_CONFIG configures it', () => {
  /** the same recorded answers in JSON-RPC form: { method, params: [fields] } → { result: { …, status } } */
  const overHttp = (exchanges: XrplExchange[]): HttpExchange[] =>
    exchanges.map(({ request: { command, ...fields }, response }) => ({
      request: { method: 'POST', path: '', body: { method: command, params: [fields] } },
      response: { status: 200, body: { result: 'error' in response ? { ...response, status: 'error' } : { ...(response.result as object), status: 'success' } } },
    }));
  const settings = { rpcUrls: ['http://down.test', 'http://node.test'], rpcTimeoutMs: 5_000 };

  it('reads through the second server when the first is unavailable, and maps rippled\'s errors', async () => {
    const replay = replayHttp(overHttp(fixture.exchanges));
    const asked: string[] = [];
    const fetch: FetchLike = async (url, init) => {
      asked.push(url);
      if (url.startsWith('http://down.test')) return { status: 503, text: async () => 'Service Unavailable' };
      return replay.fetch(url, init);
    };
    const slept: number[] = [];
    const gateway = bitcoinTronXrpGatewayFactories({ fetch, sleep: async (ms) => void slept.push(ms) }).xrp!(xrp, settings, silentLogger);
    expect(await gateway.requiresDestinationTag(DEPOSIT_ADDRESS)).toBe(true);
    expect(await gateway.requiresDestinationTag(NEW_ACCOUNT)).toBe(false); // actNotFound
    expect((await gateway.transfersInBlock(LEDGER, new Set([DEPOSIT_ADDRESS]))).map((transfer) => transfer.amount)).toEqual([25_000_000n, 1_500_000n]);
    expect(asked).toEqual(['http://down.test', 'http://node.test', 'http://node.test', 'http://node.test']);
    expect(slept).toEqual([250]);
  });
});
