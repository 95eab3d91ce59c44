import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devnetDb, faucetKey } from '../../src/chains/devnet/index.js';
import { findChain } from '../../src/catalog/registry.js';
import { startTestService, type TestService } from '../support/api-harness.js';

const SEPOLIA = 'eip155:11155111';
const SEPOLIA_ETH = `${SEPOLIA}/slip44:60`;
const XRP_TESTNET = 'xrpl:testnet';
const XRP_TESTNET_NATIVE = `${XRP_TESTNET}/slip44:144`;
const BITCOIN = 'bip122:000000000019d6689c085ae165831e93';
const RECIPIENT = '0x8ba1f109551bD432803012645Ac136ddd64DBA72';
const SENDER = '0x000000000000000000000000000000000000dEaD';
const XRP_ACCOUNT = 'rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe';

/** The error body of CONTRACT §5 with that code and status (the message is prose). */
const errorBody = (error: string, statusCode: number, details?: Record<string, unknown>) => ({
  error,
  statusCode,
  message: expect.any(String),
  ...(details ? { details } : {}),
});

describe('/devnet endpoints', () => {
  let service: TestService;
  let apiKey: string;
  const post = (path: string, body: unknown, key: string | undefined = apiKey) => service.request('POST', path, { body, apiKey: key });
  const deposit = (overrides: Record<string, unknown> = {}) =>
    post('/devnet/deposits', { chainId: SEPOLIA, tokenId: SEPOLIA_ETH, toAddress: RECIPIENT, amount: '1000000000000000000', ...overrides });
  const head = async (chainId: string) => {
    const row = await devnetDb(service.infrastructure.db).selectFrom('devnet_chains').select('head_number').where('chain_id', '=', chainId).executeTakeFirst();
    return row?.head_number ?? 0;
  };

  beforeAll(async () => {
    // a long block time: only the test mines
    service = await startTestService({ DEVNET_BLOCK_TIME_MS: '3600000' });
    apiKey = (await service.bootstrap('Acme', ['alice'])).apiKey;
  });
  afterAll(async () => service.stop());

  describe('POST /devnet/deposits', () => {
    it('answers 201 with the transaction and the new block that includes it', async () => {
      const before = await head(SEPOLIA);
      const response = await deposit();
      expect(response.status).toBe(201);
      expect(response.body).toEqual({ txnHash: expect.stringMatching(/^0x[0-9a-f]{64}$/), blockNumber: before + 1 });
      const row = await devnetDb(service.infrastructure.db)
        .selectFrom('devnet_transfers')
        .selectAll()
        .where('chain_id', '=', SEPOLIA)
        .where('tx_hash', '=', String(response.body!.txnHash))
        .executeTakeFirstOrThrow();
      expect(row).toMatchObject({ from_address: faucetKey(findChain(SEPOLIA)!).address, to_address: RECIPIENT, asset: 'native', amount: '1000000000000000000' });
    });

    it('takes an XRP destination tag, as a string or a number, and a fromAddress', async () => {
      const tagged = await post('/devnet/deposits', { chainId: XRP_TESTNET, tokenId: XRP_TESTNET_NATIVE, toAddress: XRP_ACCOUNT, amount: '25000000', destinationTag: '4294967295' });
      expect(tagged.status).toBe(201);
      expect(tagged.body).toEqual({ txnHash: expect.stringMatching(/^[0-9A-F]{64}$/), blockNumber: 1 });
      const numeric = await post('/devnet/deposits', { chainId: XRP_TESTNET, tokenId: XRP_TESTNET_NATIVE, toAddress: XRP_ACCOUNT, amount: '1', destinationTag: 0 });
      expect(numeric.status).toBe(201);
      const transfers = await devnetDb(service.infrastructure.db).selectFrom('devnet_transfers').select(['destination_tag']).where('chain_id', '=', XRP_TESTNET).where('to_address', '=', XRP_ACCOUNT).orderBy('destination_tag').execute();
      expect(transfers.map((transfer) => transfer.destination_tag)).toEqual(['0', '4294967295']);

      const external = await deposit({ fromAddress: SENDER, amount: '5' });
      expect(external.status).toBe(201);
      const row = await devnetDb(service.infrastructure.db).selectFrom('devnet_transfers').selectAll().where('tx_hash', '=', String(external.body!.txnHash)).executeTakeFirstOrThrow();
      expect(row).toMatchObject({ from_address: SENDER, to_address: RECIPIENT, amount: '5' });
    });

    it('refuses what CONTRACT §5/§6 refuse, with their codes', async () => {
      expect(await deposit({ chainId: 'eip155:2' })).toMatchObject({
        status: 422,
        body: errorBody('INVALID_CHAIN', 422, { providedChainId: 'eip155:2', supportedChains: expect.arrayContaining([SEPOLIA, BITCOIN]) }),
      });
      expect(await deposit({ tokenId: `${SEPOLIA}/erc20:0x0000000000000000000000000000000000000001` })).toMatchObject({ status: 422, body: errorBody('INVALID_TOKEN', 422, expect.any(Object)) });
      expect(await deposit({ tokenId: `${BITCOIN}/slip44:0` })).toEqual(
        expect.objectContaining({ status: 422, body: errorBody('INVALID_TOKEN_CHAIN', 422, { chainId: SEPOLIA, tokenId: `${BITCOIN}/slip44:0` }) }),
      );
      expect(await deposit({ toAddress: 'bc1qnotevm' })).toEqual(
        expect.objectContaining({ status: 400, body: errorBody('INVALID_ADDRESS', 400, { chainId: SEPOLIA, field: 'toAddress', address: 'bc1qnotevm' }) }),
      );
      // a mixed-case address with a wrong EIP-55 checksum
      const badChecksum = RECIPIENT.replace('b', 'B');
      expect(await deposit({ fromAddress: badChecksum })).toEqual(
        expect.objectContaining({ status: 400, body: errorBody('INVALID_ADDRESS', 400, { chainId: SEPOLIA, field: 'fromAddress', address: badChecksum }) }),
      );
      for (const amount of ['0', '-1', '1.5', '1e3', '+1', '01', ' 1', '', (1n << 256n).toString()]) {
        expect(await deposit({ amount }), amount).toEqual(expect.objectContaining({ status: 400, body: errorBody('INVALID_AMOUNT', 400, { amount }) }));
      }
      expect(await deposit({ amount: ((1n << 256n) - 1n).toString(), fromAddress: SENDER })).toMatchObject({ status: 201 });
      // Bitcoin refuses dust outputs: the family's builder says so, as INVALID_AMOUNT
      expect(await post('/devnet/deposits', { chainId: BITCOIN, tokenId: `${BITCOIN}/slip44:0`, toAddress: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq', amount: '100' })).toMatchObject({
        status: 400,
        body: errorBody('INVALID_AMOUNT', 400, { amount: '100' }),
      });
      expect(await deposit({ destinationTag: '1' })).toEqual(expect.objectContaining({ status: 400, body: errorBody('BAD_REQUEST', 400, { chainId: SEPOLIA }) }));
      for (const destinationTag of ['4294967296', '-1', '1.0', 'abc', 1.5]) {
        const response = await post('/devnet/deposits', { chainId: XRP_TESTNET, tokenId: XRP_TESTNET_NATIVE, toAddress: XRP_ACCOUNT, amount: '1', destinationTag });
        expect(response, String(destinationTag)).toEqual(expect.objectContaining({ status: 400, body: errorBody('BAD_REQUEST', 400, { destinationTag }) }));
      }
      const unknownField = await deposit({ memo: 'x' });
      expect(unknownField.status).toBe(400);
      expect(unknownField.body).toMatchObject({ error: 'BAD_REQUEST', statusCode: 400, details: { issues: [expect.objectContaining({ code: 'unrecognized_keys' })] } });
      const missing = await post('/devnet/deposits', { chainId: SEPOLIA, tokenId: SEPOLIA_ETH, toAddress: RECIPIENT });
      expect(missing.status).toBe(400);
      expect(missing.body).toMatchObject({ error: 'BAD_REQUEST', details: { issues: [expect.objectContaining({ path: 'amount' })] } });
      expect(await deposit({ amount: 5 })).toMatchObject({ status: 400, body: { error: 'BAD_REQUEST' } });
    });

    describe('a batch: { transfers: [...] } (CONTRACT §8)', () => {
      const transfer = (overrides: Record<string, unknown> = {}) => ({ chainId: SEPOLIA, tokenId: SEPOLIA_ETH, toAddress: RECIPIENT, amount: '7', ...overrides });
      const heads = () => Promise.all([head(SEPOLIA), head(XRP_TESTNET)]);

      it('mines every transfer in the next block of its chain, and answers in the order given', async () => {
        const [sepolia, xrp] = await heads();
        const response = await post('/devnet/deposits', {
          transfers: [transfer(), transfer({ chainId: XRP_TESTNET, tokenId: XRP_TESTNET_NATIVE, toAddress: XRP_ACCOUNT, amount: '3000000', destinationTag: 7 }), transfer({ amount: '9' })],
        });
        expect(response.status).toBe(201);
        expect(response.body).toEqual({
          transfers: [
            { txnHash: expect.stringMatching(/^0x[0-9a-f]{64}$/), blockNumber: sepolia + 1 },
            { txnHash: expect.stringMatching(/^[0-9A-F]{64}$/), blockNumber: xrp + 1 },
            { txnHash: expect.stringMatching(/^0x[0-9a-f]{64}$/), blockNumber: sepolia + 1 },
          ],
        });
        expect(await heads()).toEqual([sepolia + 1, xrp + 1]);
      });

      it('all or none: one refused transfer is named by its index, and nothing is mined on any chain', async () => {
        const before = await heads();
        const unknownChain = await post('/devnet/deposits', { transfers: [transfer(), transfer(), transfer({ chainId: 'eip155:2' })] });
        expect(unknownChain).toMatchObject({ status: 422, body: { error: 'INVALID_CHAIN', details: { index: 2 } } });
        expect(String(unknownChain.body!.message)).toMatch(/^transfers\[2\]: /);
        const dust = await post('/devnet/deposits', {
          transfers: [transfer(), transfer({ chainId: BITCOIN, tokenId: `${BITCOIN}/slip44:0`, toAddress: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq', amount: '1' })],
        });
        expect(dust).toMatchObject({ status: 400, body: { error: 'INVALID_AMOUNT', details: { index: 1, amount: '1' } } });
        const malformed = await post('/devnet/deposits', { transfers: [transfer(), { chainId: SEPOLIA, tokenId: SEPOLIA_ETH, toAddress: RECIPIENT }] });
        expect(malformed).toMatchObject({ status: 400, body: { error: 'BAD_REQUEST', details: { issues: [expect.objectContaining({ path: 'transfers.1.amount' })] } } });
        expect(await heads()).toEqual(before);
        expect(await head(BITCOIN)).toBe(0);
      });

      it('takes 1 to 1,000 transfers', async () => {
        expect(await post('/devnet/deposits', { transfers: [] })).toMatchObject({ status: 400, body: { details: { issues: [expect.objectContaining({ path: 'transfers' })] } } });
        // 1,000 is some 90 KiB of JSON: over the 64 KiB of other routes, within this one's bound
        const [before] = await heads();
        // from an external sender: no faucet signature each (this is about the bound, not the signing)
        const thousand = await post('/devnet/deposits', { transfers: Array.from({ length: 1000 }, (_, index) => transfer({ amount: String(index + 1), fromAddress: SENDER })) });
        expect(thousand.status).toBe(201);
        expect(new Set((thousand.body!.transfers as { blockNumber: number }[]).map((made) => made.blockNumber))).toEqual(new Set([before! + 1]));
        expect(await post('/devnet/deposits', { transfers: Array.from({ length: 1001 }, () => transfer()) })).toMatchObject({
          status: 400,
          body: { error: 'BAD_REQUEST', details: { issues: [expect.objectContaining({ path: 'transfers' })] } },
        });
      });
    });

    it('needs credentials', async () => {
      expect(await service.request('POST', '/devnet/deposits', { body: {} })).toEqual(expect.objectContaining({ status: 401, body: errorBody('UNAUTHORIZED', 401) }));
      expect(await post('/devnet/blocks', { chainId: SEPOLIA, count: 1 }, 'lg_not-a-key')).toMatchObject({ status: 401, body: { error: 'INVALID_API_KEY' } });
    });
  });

  describe('POST /devnet/blocks', () => {
    it('mines count blocks and answers the new head', async () => {
      const before = await head(SEPOLIA);
      expect(await post('/devnet/blocks', { chainId: SEPOLIA, count: 3 })).toMatchObject({ status: 200, body: { blockNumber: before + 3 } });
      expect(await post('/devnet/blocks', { chainId: BITCOIN, count: 1 })).toMatchObject({ status: 200, body: { blockNumber: (await head(BITCOIN)) } });
      expect((await post('/devnet/blocks', { chainId: SEPOLIA, count: 1 })).body).toEqual({ blockNumber: before + 4 });
    });

    it('refuses a count outside 1..1000 and an unknown chain', async () => {
      for (const count of [0, 1001, 1.5, '3']) {
        expect(await post('/devnet/blocks', { chainId: SEPOLIA, count }), String(count)).toMatchObject({ status: 400, body: { error: 'BAD_REQUEST', statusCode: 400 } });
      }
      expect(await post('/devnet/blocks', { chainId: 'solana:mainnet', count: 1 })).toMatchObject({ status: 422, body: { error: 'INVALID_CHAIN', details: { providedChainId: 'solana:mainnet' } } });
    });
  });

  describe('POST /devnet/reorg', () => {
    it('replaces the last blocks and answers the head, which keeps its height', async () => {
      const deposited = await post('/devnet/deposits', { chainId: 'tron:shasta', tokenId: 'tron:shasta/slip44:195', toAddress: 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8', amount: '1000000' });
      expect(deposited.status).toBe(201);
      const height = await head('tron:shasta');
      const replacedHash = (await devnetDb(service.infrastructure.db).selectFrom('devnet_blocks').select('hash').where('chain_id', '=', 'tron:shasta').where('number', '=', height).executeTakeFirstOrThrow()).hash;
      expect(await post('/devnet/reorg', { chainId: 'tron:shasta', depth: 1 })).toMatchObject({ status: 200, body: { blockNumber: height } });
      const replacement = await devnetDb(service.infrastructure.db).selectFrom('devnet_blocks').select('hash').where('chain_id', '=', 'tron:shasta').where('number', '=', height).executeTakeFirstOrThrow();
      expect(replacement.hash).not.toBe(replacedHash);
      const transaction = await devnetDb(service.infrastructure.db).selectFrom('devnet_transactions').select('status').where('hash', '=', String(deposited.body!.txnHash)).executeTakeFirstOrThrow();
      expect(transaction.status).toBe('dropped');
    });

    it('refuses a depth beyond the head or outside 1..100', async () => {
      const height = await head('tron:shasta');
      expect(await post('/devnet/reorg', { chainId: 'tron:shasta', depth: height + 1 })).toEqual(
        expect.objectContaining({ status: 400, body: errorBody('BAD_REQUEST', 400, { chainId: 'tron:shasta', depth: height + 1, headBlockNumber: height }) }),
      );
      for (const depth of [0, 101]) {
        expect(await post('/devnet/reorg', { chainId: 'tron:shasta', depth })).toMatchObject({ status: 400, body: { error: 'BAD_REQUEST' } });
      }
    });
  });

  describe('POST /devnet/faults', () => {
    it('sets a fault and answers {}', async () => {
      expect(await post('/devnet/faults', { chainId: SEPOLIA, fault: 'revert', count: 2 })).toEqual(expect.objectContaining({ status: 200, body: {} }));
      const row = await devnetDb(service.infrastructure.db).selectFrom('devnet_chains').select(['fault', 'fault_remaining']).where('chain_id', '=', SEPOLIA).executeTakeFirstOrThrow();
      expect(row).toEqual({ fault: 'revert', fault_remaining: 2 });
      expect(await post('/devnet/faults', { chainId: SEPOLIA, fault: 'broadcast_error', count: 0 })).toEqual(expect.objectContaining({ status: 200, body: {} }));
    });

    it('refuses an unknown fault or count', async () => {
      expect(await post('/devnet/faults', { chainId: SEPOLIA, fault: 'timeout', count: 1 })).toMatchObject({ status: 400, body: { error: 'BAD_REQUEST' } });
      expect(await post('/devnet/faults', { chainId: SEPOLIA, fault: 'revert', count: -1 })).toMatchObject({ status: 400, body: { error: 'BAD_REQUEST' } });
      expect(await post('/devnet/faults', { chainId: 'nope', fault: 'revert', count: 1 })).toMatchObject({ status: 422, body: { error: 'INVALID_CHAIN' } });
    });
  });

  describe('POST /devnet/require-tag', () => {
    it('flags an XRP account and answers {}', async () => {
      expect(await post('/devnet/require-tag', { chainId: XRP_TESTNET, address: XRP_ACCOUNT })).toEqual(expect.objectContaining({ status: 200, body: {} }));
      const row = await devnetDb(service.infrastructure.db).selectFrom('devnet_accounts').selectAll().where('chain_id', '=', XRP_TESTNET).executeTakeFirstOrThrow();
      expect(row).toEqual({ chain_id: XRP_TESTNET, address: XRP_ACCOUNT, requires_destination_tag: true });
    });

    it('refuses a chain other than XRP (INVALID_CHAIN) and an invalid address', async () => {
      expect(await post('/devnet/require-tag', { chainId: SEPOLIA, address: RECIPIENT })).toEqual(
        expect.objectContaining({ status: 422, body: errorBody('INVALID_CHAIN', 422, { providedChainId: SEPOLIA, supportedChains: ['xrpl:mainnet', 'xrpl:testnet'] }) }),
      );
      expect(await post('/devnet/require-tag', { chainId: XRP_TESTNET, address: 'rNotAnAddress' })).toEqual(
        expect.objectContaining({ status: 400, body: errorBody('INVALID_ADDRESS', 400, { chainId: XRP_TESTNET, field: 'address', address: 'rNotAnAddress' }) }),
      );
      expect(await post('/devnet/require-tag', { chainId: XRP_TESTNET })).toMatchObject({ status: 400, body: { error: 'BAD_REQUEST' } });
    });
  });

  it('documents the endpoints in /openapi.json', async () => {
    const document = await service.request('GET', '/openapi.json');
    const paths = Object.keys(document.body!.paths as Record<string, unknown>);
    expect(paths).toEqual(expect.arrayContaining(['/devnet/deposits', '/devnet/blocks', '/devnet/reorg', '/devnet/faults', '/devnet/require-tag']));
  });
});

describe('/devnet endpoints in production', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ NODE_ENV: 'production' });
  });
  afterAll(async () => service.stop());

  it('do not exist: 404 NOT_FOUND, with or without credentials, and not in /openapi.json', async () => {
    const body = { chainId: SEPOLIA, count: 1 };
    for (const path of ['/devnet/deposits', '/devnet/blocks', '/devnet/reorg', '/devnet/faults', '/devnet/require-tag']) {
      const response = await service.request('POST', path, { body });
      expect(response.status, path).toBe(404);
      expect(response.body).toEqual({ error: 'NOT_FOUND', message: 'No such route', statusCode: 404 });
    }
    const document = await service.request('GET', '/openapi.json');
    expect(Object.keys(document.body!.paths as Record<string, unknown>).filter((path) => path.startsWith('/devnet'))).toEqual([]);
    expect(await devnetDb(service.infrastructure.db).selectFrom('devnet_chains').selectAll().execute()).toEqual([]);
  });
});
