import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { confirmDeposit, recordDeposit, revertDeposit, type DepositServices } from '../../src/application/deposits.js';
import { startTestService, type TestService } from '../support/api-harness.js';
import { observed, ownerOf, settleDeposits } from '../support/deposits.js';

const ABANDON = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const ETH_TOKEN = { id: 'eip155:1/slip44:60', name: 'Ether', symbol: 'ETH', decimals: 18, address: '' };
const USDC_POLYGON = '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359';
const USDC_TOKEN = { id: `eip155:137/erc20:${USDC_POLYGON.toLowerCase()}`, name: 'USD Coin', symbol: 'USDC', decimals: 6, address: USDC_POLYGON };
const BTC_TOKEN = { id: 'bip122:000000000019d6689c085ae165831e93/slip44:0', name: 'Bitcoin', symbol: 'BTC', decimals: 8, address: '' };
const metadata = { actor: 'watcher:test' };

describe('GET /payments, /payments/:userId/deposits and /portfolio (SPEC §2.3, §4.4; CONTRACT §6, §9)', () => {
  let service: TestService;
  let acme: { orgId: string; apiKey: string };
  let globexKey: string;
  const times: string[] = [];

  /** three of alice's deposits, one of bob's, then: dust (never listed) and one confirmed of alice's */
  const eth = observed(1, { amount: 1_500_000_000_000_000_000n });
  const usdc = observed(2, { chainId: 'eip155:137', asset: USDC_POLYGON, amount: 25_000_000n, index: 4 });
  const btc = observed(3, { chainId: 'bip122:000000000019d6689c085ae165831e93', txHash: 'ab'.repeat(32), from: 'bc1qsender', amount: 150_000n, index: 1 });
  const bobs = observed(4, { amount: 300_000_000_000_000n, from: '0x00000000000000000000000000000000000000f4' });
  const dust = observed(5, { amount: 1n });

  const deposit = (transfer: typeof eth, userId: string, Token: object, createdAt: string, updatedAt = createdAt) => ({
    chainId: transfer.chainId,
    txnHash: transfer.txHash,
    tokenId: (Token as { id: string }).id,
    amount: transfer.amount.toString(),
    accountChainId: transfer.chainId,
    externalUserId: userId,
    senderAddress: transfer.from,
    // CONTRACT §6's reconciliation fields: only eth is confirmed (12 confirmations)
    toAddress: transfer.to,
    outputIndex: transfer.index,
    status: transfer === eth ? 'confirmed' : 'detected',
    confirmations: transfer === eth ? 12 : 0,
    Token,
    createdAt,
    updatedAt,
  });
  const get = (url: string, apiKey = acme.apiKey) => service.request('GET', url, { apiKey });
  /** the body of a 200 answer */
  const ok = async (response: ReturnType<typeof get>) => {
    const { status, body } = await response;
    expect(status).toBe(200);
    return body;
  };

  beforeAll(async () => {
    service = await startTestService({ LEDGERGATE_SIGNER_MNEMONIC: ABANDON, DEVNET_BLOCK_TIME_MS: '3600000' });
    const created = await service.bootstrap('Acme', ['alice']);
    acme = { orgId: created.organization.id, apiKey: created.apiKey };
    globexKey = (await service.bootstrap('Globex', ['gina'])).apiKey;
    const services: DepositServices = { store: service.infrastructure.store, clock: service.now };
    for (const [transfer, user] of [[eth, 'alice'], [usdc, 'alice'], [btc, 'alice'], [bobs, 'bob 2/b'], [dust, 'alice']] as const) {
      times.push(service.now().toISOString());
      await recordDeposit(services, transfer, ownerOf(acme.orgId, user, transfer.chainId), metadata);
      service.advance(1000);
    }
    times.push(service.now().toISOString());
    await confirmDeposit(services, eth, 12, metadata);
    await settleDeposits(service);
  });
  afterAll(async () => service.stop());

  it('lists the organization’s deposits newest first, with exactly SPEC’s and CONTRACT §6’s fields; dust is not listed', async () => {
    expect(await ok(get('/payments'))).toEqual({
      payments: [
        deposit(bobs, 'bob 2/b', ETH_TOKEN, times[3]!),
        deposit(btc, 'alice', BTC_TOKEN, times[2]!),
        deposit(usdc, 'alice', USDC_TOKEN, times[1]!),
        deposit(eth, 'alice', ETH_TOKEN, times[0]!, times[5]!),
      ],
      nextCursor: null,
    });
    const body = (await get('/payments')).body as { payments: object[] };
    expect(Object.keys(body.payments[0]!).sort()).toEqual(
      ['Token', 'accountChainId', 'amount', 'chainId', 'confirmations', 'createdAt', 'externalUserId', 'outputIndex', 'senderAddress', 'status', 'toAddress', 'tokenId', 'txnHash', 'updatedAt'],
    );
  });

  it('pages with limit and cursor, and refuses a forged cursor', async () => {
    const first = await get('/payments?limit=3');
    const { payments, nextCursor } = first.body as { payments: { txnHash: string }[]; nextCursor: string };
    expect(payments.map((payment) => payment.txnHash)).toEqual([bobs.txHash, btc.txHash, usdc.txHash]);
    expect(nextCursor).toEqual(expect.any(String));
    const second = await get(`/payments?limit=3&cursor=${nextCursor}`);
    expect(second.body).toEqual({ payments: [deposit(eth, 'alice', ETH_TOKEN, times[0]!, times[5]!)], nextCursor: null });
    expect((await get('/payments?cursor=bm9wZQ')).body).toMatchObject({ error: 'BAD_REQUEST', statusCode: 400 });
    expect((await get('/payments?limit=0')).status).toBe(400);
    expect((await get('/payments?limit=1001')).status).toBe(400);
  });

  it('filters by userId, and lists one user’s deposits across chains', async () => {
    const alice = [deposit(btc, 'alice', BTC_TOKEN, times[2]!), deposit(usdc, 'alice', USDC_TOKEN, times[1]!), deposit(eth, 'alice', ETH_TOKEN, times[0]!, times[5]!)];
    expect(await ok(get('/payments?userId=alice'))).toEqual({ payments: alice, nextCursor: null });
    expect(await ok(get('/payments/alice/deposits'))).toEqual({ deposits: alice, nextCursor: null });
    const page = await get('/payments/alice/deposits?limit=2');
    expect(page.body).toEqual({ deposits: alice.slice(0, 2), nextCursor: expect.any(String) });
    expect((await get(`/payments/alice/deposits?limit=2&cursor=${(page.body as { nextCursor: string }).nextCursor}`)).body).toEqual({
      deposits: alice.slice(2),
      nextCursor: null,
    });
    // a user id with a space and a slash, percent-encoded in the path
    expect((await get('/payments/bob%202%2Fb/deposits')).body).toEqual({ deposits: [deposit(bobs, 'bob 2/b', ETH_TOKEN, times[3]!)], nextCursor: null });
    expect((await get(`/payments?${new URLSearchParams({ userId: 'bob 2/b' })}`)).body).toEqual({
      payments: [deposit(bobs, 'bob 2/b', ETH_TOKEN, times[3]!)],
      nextCursor: null,
    });
    expect((await get('/payments/nobody/deposits')).body).toEqual({ deposits: [], nextCursor: null });
  });

  it('answers INVALID_USER_ID for a user id that is empty, too long or not printable ASCII', async () => {
    for (const url of ['/payments?userId=', `/payments?userId=${'x'.repeat(256)}`, '/payments?userId=caf%C3%A9', `/payments/${'x'.repeat(256)}/deposits`, '/payments/tab%09/deposits']) {
      expect(await get(url), url).toMatchObject({ status: 400, body: { error: 'INVALID_USER_ID', statusCode: 400 } });
    }
  });

  it('keeps GET /payments/deposit-address the accounts route, and a user named "deposit-address" reachable', async () => {
    const address = await get(`/payments/deposit-address?${new URLSearchParams({ chainId: 'eip155:1', tokenId: ETH_TOKEN.id, userId: 'alice' })}`);
    expect(address.status).toBe(200);
    expect(address.body).toMatchObject({ address: { chainId: 'eip155:1', externalUserId: 'alice', properties: { address: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94' } } });
    expect((await get('/payments/deposit-address')).body).toMatchObject({ error: 'BAD_REQUEST' });
    expect((await get('/payments/deposit-address/deposits')).body).toEqual({ deposits: [], nextCursor: null });
  });

  it('shows the organization’s balances: available confirmed, pending detected; dust nowhere', async () => {
    expect(await ok(get('/portfolio'))).toEqual({
      balances: [
        { chainId: 'eip155:1', tokenId: ETH_TOKEN.id, available: '1500000000000000000', pending: '300000000000000', Token: ETH_TOKEN },
        { chainId: 'bip122:000000000019d6689c085ae165831e93', tokenId: BTC_TOKEN.id, available: '0', pending: '150000', Token: BTC_TOKEN },
        { chainId: 'eip155:137', tokenId: USDC_TOKEN.id, available: '0', pending: '25000000', Token: USDC_TOKEN },
      ],
    });
  });

  it('shows another organization nothing, and a caller without credentials nothing at all', async () => {
    expect((await get('/payments', globexKey)).body).toEqual({ payments: [], nextCursor: null });
    expect((await get('/payments?userId=alice', globexKey)).body).toEqual({ payments: [], nextCursor: null });
    expect((await get('/payments/alice/deposits', globexKey)).body).toEqual({ deposits: [], nextCursor: null });
    expect((await get('/portfolio', globexKey)).body).toEqual({ balances: [] });
    for (const url of ['/payments', '/payments/alice/deposits', '/portfolio']) {
      expect(await service.request('GET', url), url).toMatchObject({ status: 401, body: { error: 'UNAUTHORIZED' } });
    }
  });

  it('shows two deposits in one transaction (two outputs) as two rows told apart by outputIndex, and a reverted one as reverted', async () => {
    const initech = await service.bootstrap('Initech', ['ian']);
    const services: DepositServices = { store: service.infrastructure.store, clock: service.now };
    const first = observed(60, { index: 0, amount: 10n ** 16n });
    const second = observed(60, { index: 1, amount: 2n * 10n ** 16n, to: '0x00000000000000000000000000000000000000a2' });
    const reorged = observed(61, { amount: 3n * 10n ** 16n });
    for (const transfer of [first, second, reorged]) await recordDeposit(services, transfer, ownerOf(initech.organization.id, 'ivy'), metadata);
    await confirmDeposit(services, second, 12, metadata);
    await revertDeposit(services, reorged, 'reorg', metadata);
    await settleDeposits(service);

    const { payments } = (await ok(get('/payments', initech.apiKey))) as { payments: Record<string, unknown>[] };
    expect(payments.map(({ txnHash, outputIndex, toAddress, amount, status, confirmations }) => ({ txnHash, outputIndex, toAddress, amount, status, confirmations }))).toEqual([
      { txnHash: reorged.txHash, outputIndex: 0, toAddress: reorged.to, amount: '30000000000000000', status: 'reverted', confirmations: 0 },
      { txnHash: first.txHash, outputIndex: 1, toAddress: second.to, amount: '20000000000000000', status: 'confirmed', confirmations: 12 },
      { txnHash: first.txHash, outputIndex: 0, toAddress: first.to, amount: '10000000000000000', status: 'detected', confirmations: 0 },
    ]);
    // a reverted deposit never reaches a balance
    expect((await get('/portfolio', initech.apiKey)).body).toEqual({
      balances: [{ chainId: 'eip155:1', tokenId: ETH_TOKEN.id, available: '20000000000000000', pending: '10000000000000000', Token: ETH_TOKEN }],
    });
  });

  it('documents the three routes in /openapi.json', async () => {
    const paths = Object.keys(((await service.request('GET', '/openapi.json')).body as { paths: Record<string, unknown> }).paths);
    expect(paths).toEqual(expect.arrayContaining(['/payments', '/payments/{userId}/deposits', '/payments/deposit-address', '/portfolio']));
  });
});
