import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { faucetKey } from '../../src/chains/devnet/index.js';
import { findChain } from '../../src/catalog/registry.js';
import { findToken, tokenSummaryOf } from '../../src/catalog/tokens.js';
import { loadConfig } from '../../src/config/env.js';
import { createLogger } from '../../src/log.js';
import { composeService } from '../../src/server.js';
import { startTestService, type TestService } from '../support/api-harness.js';
import { settleDeposits } from '../support/deposits.js';
import { startWebhookReceiver, waitUntil, type WebhookReceiver } from '../support/webhook-receiver.js';

const ETHEREUM = 'eip155:1'; // 12 confirmations
const ETH_USDT = 'eip155:1/erc20:0xdac17f958d2ee523a2206206994597c13d831ec7';
const SEPOLIA = 'eip155:11155111'; // 6 confirmations
const SEPOLIA_ETH = `${SEPOLIA}/slip44:60`;
const BITCOIN = 'bip122:000000000019d6689c085ae165831e93'; // 2 confirmations
const BTC = `${BITCOIN}/slip44:0`;
const TRON = 'tron:0x00000000000000000000000000000000'; // 19 confirmations
const TRX = `${TRON}/slip44:195`;
const TRON_USDT = `${TRON}/trc20:TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t`;
const XRP = 'xrpl:mainnet'; // 1 confirmation
const XRP_NATIVE = `${XRP}/slip44:144`;
const BITCOIN_TESTNET = 'bip122:000000000933ea01ad0ee984209779ba'; // 1 confirmation
const TBTC = `${BITCOIN_TESTNET}/slip44:0`;
const ENV = { DEVNET_BLOCK_TIME_MS: '3600000', WEBHOOK_RETRY_DELAYS_MS: '50,50,50,50,50' };

type Webhook = { id: string; type: string; payload: Record<string, unknown> };

/**
 * Deposits end to end on the devnet: the service's own watchers (started by composeService) see
 * what POST /devnet/deposits pays, the projections turn the events into webhooks that a real HTTP
 * receiver gets, and /payments and /portfolio show the result. Blocks come only from the test.
 */
describe('deposits end to end: devnet → watcher → webhooks, /payments, /portfolio', () => {
  let service: TestService;
  let receiver: WebhookReceiver;
  let apiKey: string;
  let orgId: string;

  beforeAll(async () => {
    service = await startTestService(ENV);
    receiver = await startWebhookReceiver(() => 200);
    const acme = await service.bootstrap('Acme', ['alice']);
    apiKey = acme.apiKey;
    orgId = acme.organization.id;
    expect((await service.request('PATCH', '/organisation/webhook', { apiKey, body: { webhookUrl: receiver.url } })).status).toBe(200);
  });
  afterAll(async () => {
    await service.stop();
    await receiver.close();
  });

  const get = async (url: string) => {
    const response = await service.request('GET', url, { apiKey });
    expect(response.status, url).toBe(200);
    return response.body!;
  };
  const post = async (url: string, body: unknown) => {
    const response = await service.request('POST', url, { apiKey, body });
    expect(response.status, `${url} ${JSON.stringify(body)}`).toBeLessThan(300);
    return response.body as { txnHash: string; blockNumber: number };
  };
  const depositAddress = async (chainId: string, tokenId: string, userId: string) =>
    ((await get(`/payments/deposit-address?${new URLSearchParams({ chainId, tokenId, userId })}`)).address as { properties: { address: string; destinationTag?: string } }).properties;
  const pay = (chainId: string, tokenId: string, toAddress: string, amount: string, destinationTag?: number) =>
    post('/devnet/deposits', { chainId, tokenId, toAddress, amount, ...(destinationTag === undefined ? {} : { destinationTag }) });
  const mine = (chainId: string, count: number) => post('/devnet/blocks', { chainId, count }) as unknown as Promise<{ blockNumber: number }>;
  /** every webhook received, each delivery once (a retry repeats its x-webhook-id) */
  const webhooks = (): Webhook[] => {
    const byId = new Map<string, Webhook>();
    for (const request of receiver.received) {
      const body = JSON.parse(request.body.toString('utf8')) as Omit<Webhook, 'id'>;
      byId.set(String(request.headers['x-webhook-id']), { id: String(request.headers['x-webhook-id']), ...body });
    }
    return [...byId.values()];
  };
  const depositWebhooks = (type: string, txnHash: string) => webhooks().filter((hook) => hook.type === type && hook.payload.txnHash === txnHash);
  const waitForDepositWebhook = async (type: string, txnHash: string) => {
    await waitUntil(() => depositWebhooks(type, txnHash).length > 0, 20_000, `${type} of ${txnHash}`);
    return depositWebhooks(type, txnHash);
  };
  /** the watcher has scanned the chain up to `blockNumber` */
  const scannedThrough = (chainId: string, blockNumber: number) =>
    waitUntil(
      async () => {
        const { rows } = await sql<{ next_block: string }>`select next_block from chain_watcher_cursors where chain_id = ${chainId}`.execute(service.infrastructure.db);
        return Number(rows[0]?.next_block ?? 0) > blockNumber;
      },
      20_000,
      `the ${chainId} watcher to pass block ${blockNumber}`,
    );
  const balance = async (tokenId: string) => {
    const { balances } = (await get('/portfolio')) as { balances: { tokenId: string; available: string; pending: string }[] };
    const found = balances.find((entry) => entry.tokenId === tokenId);
    return { available: found?.available ?? '0', pending: found?.pending ?? '0' };
  };
  const payments = async () => ((await get('/payments?limit=100')) as { payments: Record<string, unknown>[] }).payments;
  const depositPayload = (chainId: string, tokenId: string, txnHash: string, amount: string, userId: string, blockNumber: number, confirmations: number, toAddress: string) => ({
    chainId,
    txnHash,
    // CONTRACT §6: which output of the transaction (a Bitcoin payment may have its change first), to which address, and where it stands
    outputIndex: expect.any(Number),
    toAddress,
    status: confirmations === 0 ? 'detected' : 'confirmed',
    tokenId,
    amount,
    externalUserId: userId,
    accountChainId: chainId,
    senderAddress: faucetKey(findChain(chainId)!).address,
    blockNumber,
    confirmations,
    Token: tokenSummaryOf(tokenId),
  });
  const balanceUpdates = (tokenId: string) =>
    webhooks()
      .filter((hook) => hook.type === 'balance.updated' && hook.payload.tokenId === tokenId)
      .map((hook) => hook.payload);

  /** pays, sees deposit.detected, mines to one block short, then to the chain's confirmations: deposit.confirmed and the credit */
  const depositThroughConfirmation = async (chainId: string, tokenId: string, userId: string, amount: string) => {
    const required = findChain(chainId)!.properties.confirmations;
    const { address } = await depositAddress(chainId, tokenId, userId);
    const before = await balance(tokenId);
    const paid = await pay(chainId, tokenId, address, amount);
    expect((await waitForDepositWebhook('deposit.detected', paid.txnHash)).map((hook) => hook.payload)).toEqual([
      depositPayload(chainId, tokenId, paid.txnHash, amount, userId, paid.blockNumber, 0, address),
    ]);
    if (required > 2) {
      const { blockNumber } = await mine(chainId, required - 2); // one confirmation short
      await scannedThrough(chainId, blockNumber);
    }
    await mine(chainId, 1);
    // exactly the chain's confirmations: confirming one block early would report one fewer
    expect((await waitForDepositWebhook('deposit.confirmed', paid.txnHash)).map((hook) => hook.payload)).toEqual([
      depositPayload(chainId, tokenId, paid.txnHash, amount, userId, paid.blockNumber, required, address),
    ]);
    await settleDeposits(service);
    expect((await payments()).filter((payment) => payment.txnHash === paid.txnHash)).toEqual([
      expect.objectContaining({ chainId, txnHash: paid.txnHash, tokenId, amount, externalUserId: userId, accountChainId: chainId, Token: tokenSummaryOf(tokenId) }),
    ]);
    expect(await balance(tokenId)).toEqual({ available: (BigInt(before.available) + BigInt(amount)).toString(), pending: before.pending });
    await waitUntil(() => balanceUpdates(tokenId).some((update) => update.available === (BigInt(before.available) + BigInt(amount)).toString()), 20_000, 'balance.updated');
    return paid;
  };

  it('an ERC-20 (USDT) deposit on Ethereum: detected with 0 confirmations, confirmed at 12, listed once, available rose by the amount', async () => {
    await depositThroughConfirmation(ETHEREUM, ETH_USDT, 'eth-user', '25000000');
    expect(balanceUpdates(ETH_USDT)).toEqual([
      { chainId: ETHEREUM, tokenId: ETH_USDT, available: '0', pending: '25000000', reason: 'deposit', Token: tokenSummaryOf(ETH_USDT) },
      { chainId: ETHEREUM, tokenId: ETH_USDT, available: '25000000', pending: '0', reason: 'deposit', Token: tokenSummaryOf(ETH_USDT) },
    ]);
  });

  it('sweeps a confirmed ERC-20 deposit once the gas wallet is funded: the settlement wallet holds it, the gas top-up is no deposit', async () => {
    const paid = await depositThroughConfirmation(ETHEREUM, ETH_USDT, 'sweep-user', '7000000');
    const { address } = await depositAddress(ETHEREUM, ETH_USDT, 'sweep-user');
    const gateway = service.composed.gateways(ETHEREUM)!;
    const usdt = findToken(ETH_USDT)!.address;
    const wallets = await service.composed.organizationWallets!.walletsOf(orgId, ETHEREUM);
    const sweepOf = async () =>
      service.infrastructure.db.selectFrom('sweeps').selectAll().where('chain_id', '=', ETHEREUM).where('tx_hash', '=', paid.txnHash.toLowerCase()).executeTakeFirst();

    // no gas yet: the sweep waits, and says why
    await waitUntil(async () => (await sweepOf())?.status === 'WaitingForGas', 20_000, 'the sweep to wait for gas');
    const settlementBefore = await gateway.balance(wallets.settlementAddress, usdt);
    const { gasWallets } = (await get('/gas-station')) as { gasWallets: { chainId: string; address: string; balance: string }[] };
    const gasWallet = gasWallets.find((wallet) => wallet.chainId === ETHEREUM)!;
    expect(gasWallet).toMatchObject({ address: wallets.gasAddress, balance: '0' });

    // the organization funds its gas wallet on chain; the sweeper looks again after its retry delay (services' clock)
    await pay(ETHEREUM, `${ETHEREUM}/slip44:60`, gasWallet.address, '10000000000000000');
    service.advance(60_000);
    for (let block = 0; (await sweepOf())?.status !== 'Confirmed'; block++) {
      if (block > 200) throw new Error(`the sweep did not complete: ${JSON.stringify(await sweepOf())}`);
      await mine(ETHEREUM, 1);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const sweep = (await sweepOf())!;
    expect(sweep).toMatchObject({ status: 'Confirmed', kind: 'token', amount: '7000000', deposit_address: address, settlement_address: wallets.settlementAddress });
    expect(await gateway.balance(address, usdt)).toBe(0n);
    // the earlier USDT deposit waited for the same gas wallet: the settlement wallet holds both sweeps, exactly
    const sweptUsdt = await service.infrastructure.db.selectFrom('sweeps').select('swept_amount').where('token_id', '=', ETH_USDT).where('status', '=', 'Confirmed').execute();
    expect(sweptUsdt.map((row) => row.swept_amount).sort()).toEqual(['25000000', '7000000']);
    expect(await gateway.balance(wallets.settlementAddress, usdt)).toBe(settlementBefore + 32_000_000n);

    // the top-up paid the deposit address in native ETH: the watcher saw it and recorded nothing
    const { blockNumber } = await mine(ETHEREUM, 1);
    await scannedThrough(ETHEREUM, blockNumber);
    const deposits = await service.infrastructure.store.readAll({ filter: { categories: ['deposit'] }, maxCount: 10_000 });
    expect(deposits.filter((event) => event.type === 'DepositDetected' && String(event.data.senderAddress).toLowerCase() === wallets.gasAddress!.toLowerCase())).toEqual([]);
    expect(await balance(`${ETHEREUM}/slip44:60`)).toEqual({ available: '0', pending: '0' });
  });

  it('a Bitcoin deposit, confirmed at 2', async () => {
    await depositThroughConfirmation(BITCOIN, BTC, 'btc-user', '1500000');
  });

  it('Tron: TRX and a TRC-20 (USDT), each confirmed at 19', async () => {
    await depositThroughConfirmation(TRON, TRX, 'tron-user', '12000000');
    await depositThroughConfirmation(TRON, TRON_USDT, 'tron-user', '3000000');
  });

  it('XRP with the user’s destination tag is credited; no tag or an unknown tag is not credited and not listed', async () => {
    const { address, destinationTag } = await depositAddress(XRP, XRP_NATIVE, 'xrp-user');
    const before = await balance(XRP_NATIVE);
    const tagged = await pay(XRP, XRP_NATIVE, address, '50000000', Number(destinationTag));
    // one confirmation: its own block, so detected and confirmed in one look at the chain
    expect((await waitForDepositWebhook('deposit.detected', tagged.txnHash)).map((hook) => hook.payload)).toEqual([
      depositPayload(XRP, XRP_NATIVE, tagged.txnHash, '50000000', 'xrp-user', tagged.blockNumber, 0, address),
    ]);
    expect((await waitForDepositWebhook('deposit.confirmed', tagged.txnHash)).map((hook) => hook.payload)).toEqual([
      depositPayload(XRP, XRP_NATIVE, tagged.txnHash, '50000000', 'xrp-user', tagged.blockNumber, 1, address),
    ]);
    const untagged = await pay(XRP, XRP_NATIVE, address, '60000000');
    const unknownTag = await pay(XRP, XRP_NATIVE, address, '70000000', 777_777);
    // the watcher recorded the other two (unattributed, confirmed, never credited)
    await waitUntil(
      async () => {
        const events = await service.infrastructure.store.readAll({ filter: { categories: ['deposit'] }, maxCount: 10_000 });
        return [untagged, unknownTag].every((paid) => events.some((event) => event.type === 'DepositConfirmed' && event.data.txHash === paid.txnHash && event.data.credited === false));
      },
      20_000,
      'the unattributed XRP deposits',
    );
    await settleDeposits(service);
    const listed = (await payments()).map((payment) => payment.txnHash);
    expect(listed).toContain(tagged.txnHash);
    expect(listed).not.toContain(untagged.txnHash);
    expect(listed).not.toContain(unknownTag.txnHash);
    expect(webhooks().filter((hook) => [untagged.txnHash, unknownTag.txnHash].includes(String(hook.payload.txnHash)))).toEqual([]);
    expect(await balance(XRP_NATIVE)).toEqual({ available: (BigInt(before.available) + 50_000_000n).toString(), pending: '0' });
  });

  it('a reorg of depth 2 before confirmation: the deposit is never credited (pending back to 0, no deposit.confirmed)', async () => {
    const { address } = await depositAddress(SEPOLIA, SEPOLIA_ETH, 'reorg-user');
    const paid = await pay(SEPOLIA, SEPOLIA_ETH, address, '100000000000000000');
    await waitForDepositWebhook('deposit.detected', paid.txnHash);
    const { blockNumber } = await mine(SEPOLIA, 1);
    await scannedThrough(SEPOLIA, blockNumber);
    await settleDeposits(service);
    expect(await balance(SEPOLIA_ETH)).toEqual({ available: '0', pending: '100000000000000000' });

    expect(await post('/devnet/reorg', { chainId: SEPOLIA, depth: 2 })).toEqual({ blockNumber });
    await waitUntil(() => balanceUpdates(SEPOLIA_ETH).some((update) => update.pending === '0'), 20_000, 'the pending amount to leave');
    const { blockNumber: later } = await mine(SEPOLIA, 10);
    await scannedThrough(SEPOLIA, later);
    await settleDeposits(service);
    expect(await balance(SEPOLIA_ETH)).toEqual({ available: '0', pending: '0' });
    expect(depositWebhooks('deposit.confirmed', paid.txnHash)).toEqual([]);
    // listed as reverted (CONTRACT §6), never as money the user has
    expect((await payments()).filter((payment) => payment.txnHash === paid.txnHash).map((payment) => payment.status)).toEqual(['reverted']);
    const events = (await service.infrastructure.store.readAll({ filter: { categories: ['deposit'] }, maxCount: 10_000 })).filter((event) => event.data.txHash === paid.txnHash);
    expect(events.map((event) => [event.type, event.data.reason])).toEqual([
      ['DepositDetected', undefined],
      ['DepositReverted', 'reorg'],
    ]);
    expect(events[1]!.metadata).toMatchObject({ actor: `watcher:${SEPOLIA}`, orgId });
  });

  it('two services on one database, the second stopped and a third started mid-way: every deposit recorded, credited and sent once', async () => {
    /** another process of the service over the same database: its own watchers, projections and dispatcher */
    const anotherService = async () => {
      const config = loadConfig({ DATA_DIR: service.dataDir, LEDGERGATE_SECRET_KEY: randomBytes(32).toString('base64'), LOG_LEVEL: 'silent', ...ENV });
      const other = composeService(service.infrastructure, config, createLogger('silent'), service.now);
      await other.startWorkers();
      return other;
    };
    const { address } = await depositAddress(BITCOIN_TESTNET, TBTC, 'shared-user');
    const before = await balance(TBTC);
    const paid: string[] = [];
    const payAndSee = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const { txnHash } = await pay(BITCOIN_TESTNET, TBTC, address, String(200_000 + paid.length));
        paid.push(txnHash);
        await waitForDepositWebhook('deposit.confirmed', txnHash);
      }
    };

    const second = await anotherService();
    await payAndSee(3);
    await second.stopWorkers(); // whichever of the two was watching the chain, the other goes on
    await payAndSee(2);
    const third = await anotherService();
    await payAndSee(2);
    await third.stopWorkers();

    await settleDeposits(service);
    const events = (await service.infrastructure.store.readAll({ filter: { categories: ['deposit'] }, maxCount: 10_000 })).filter((event) => paid.includes(String(event.data.txHash)));
    for (const type of ['DepositDetected', 'DepositConfirmed']) {
      expect(events.filter((event) => event.type === type).map((event) => event.data.txHash).sort(), type).toEqual([...paid].sort());
    }
    for (const type of ['deposit.detected', 'deposit.confirmed']) {
      expect(paid.map((txnHash) => depositWebhooks(type, txnHash).length), type).toEqual(paid.map(() => 1));
    }
    expect((await payments()).filter((payment) => paid.includes(String(payment.txnHash)))).toHaveLength(paid.length);
    const total = paid.reduce((sum, _hash, n) => sum + BigInt(200_000 + n), 0n);
    expect(await balance(TBTC)).toEqual({ available: (BigInt(before.available) + total).toString(), pending: before.pending });
  });
});
