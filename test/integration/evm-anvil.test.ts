import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { generateMnemonic } from 'bip39';
import { sql } from 'kysely';
import { Wallet, type Contract, type TransactionResponse } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAggregate } from '../../src/application/command-handler.js';
import { createEvmGateway } from '../../src/chains/evm/gateway.js';
import { BroadcastRejectedError } from '../../src/chains/gateway.js';
import { findChain } from '../../src/catalog/registry.js';
import { createSigner } from '../../src/chains/signer/signer.js';
import { depositDecider } from '../../src/domain/deposit/decide.js';
import { streams } from '../../src/domain/streams.js';
import { startTestService, type TestService } from '../support/api-harness.js';
import { startAnvil, placeTestToken, type Anvil } from '../support/anvil.js';
import { waitUntil } from '../support/webhook-receiver.js';

const ETHEREUM = 'eip155:1';
const ETH = `${ETHEREUM}/slip44:60`;
const USDT_CONTRACT = '0xdAC17F958D2ee523a2206206994597C13D831ec7';
const USDT = `${ETHEREUM}/erc20:${USDT_CONTRACT.toLowerCase()}`;
const CONFIRMATIONS = 3; // CHAINS_CONFIG's override of the registry's 12
/** anvil's second default account ("test test … junk"), another outside sender */
const SECOND_ANVIL_KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
const ETHER = 10n ** 18n;

/**
 * Ethereum on a real node: the whole service (composeService over a test database) with a
 * CHAINS_CONFIG naming eip155:1 on anvil; every other chain stays on the devnet. The test plays the
 * outside world with anvil's funded account and a test ERC-20 compiled by solc and placed at USDT's
 * catalog address; blocks are mined by the test (anvil_mine), a reorg made with anvil_reorg.
 */
describe('EVM gateway against anvil: deposits, confirmations, sweeps with a gas top-up, withdrawals, reorgs', { timeout: 120_000 }, () => {
  let anvil: Anvil;
  let token: Contract;
  let service: TestService;
  let apiKey: string;
  let configDir: string;

  beforeAll(async () => {
    anvil = await startAnvil(1);
    token = await placeTestToken(anvil, USDT_CONTRACT);
    const mnemonic = generateMnemonic(256);
    configDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ledgergate-chains-'));
    const configPath = path.join(configDir, 'chains.json');
    const accountXpub = createSigner(mnemonic).accountXpub('evm', 'mainnet');
    await fs.writeFile(configPath, JSON.stringify({ chains: { [ETHEREUM]: { rpcUrls: [anvil.url], confirmations: CONFIRMATIONS, accountXpub, fees: { maxFeePerGasGwei: 50 } } } }));
    service = await startTestService({ CHAINS_CONFIG: configPath, LEDGERGATE_SIGNER_MNEMONIC: mnemonic, DEVNET_BLOCK_TIME_MS: '3600000', RATE_LIMIT_PER_MINUTE: '1000000' });
    const acme = await service.bootstrap('Acme', ['alice']);
    apiKey = acme.apiKey;
  }, 120_000);
  afterAll(async () => {
    await service?.stop();
    await anvil?.stop();
    if (configDir) await fs.rm(configDir, { recursive: true, force: true });
  });

  const request = async (method: 'GET' | 'POST', url: string, body?: unknown) => {
    const response = await service.request(method, url, { apiKey, ...(body === undefined ? {} : { body }) });
    expect(response.status, `${method} ${url} → ${JSON.stringify(response.body)}`).toBeLessThan(300);
    return response.body as Record<string, unknown>;
  };
  const depositAddress = async (tokenId: string, userId: string) => {
    const { address } = (await request('GET', `/payments/deposit-address?${new URLSearchParams({ chainId: ETHEREUM, tokenId, userId })}`)) as { address: { properties: { address: string } } };
    return address.properties.address;
  };
  const balanceOf = async (tokenId: string) => {
    const { balances } = (await request('GET', '/portfolio')) as { balances: { tokenId: string; available: string; pending: string }[] };
    const entry = balances.find((candidate) => candidate.tokenId === tokenId);
    return { available: BigInt(entry?.available ?? '0'), pending: BigInt(entry?.pending ?? '0') };
  };
  const depositRow = (txHash: string, index: number) =>
    service.infrastructure.db.selectFrom('deposits').selectAll().where('chain_id', '=', ETHEREUM).where('tx_hash', '=', txHash.toLowerCase()).where('output_index', '=', index).executeTakeFirst();
  const depositState = async (txHash: string, index: number) => (await loadAggregate(service.infrastructure.store, streams.deposit(ETHEREUM, txHash.toLowerCase(), index), depositDecider)).state;
  const watcherCursor = async () =>
    Number((await sql<{ next_block: number }>`select next_block from chain_watcher_cursors where chain_id = ${ETHEREUM}`.execute(service.infrastructure.db)).rows[0]?.next_block ?? 0);
  const sweepRow = (txHash: string) => service.infrastructure.db.selectFrom('sweeps').selectAll().where('chain_id', '=', ETHEREUM).where('tx_hash', '=', txHash.toLowerCase()).executeTakeFirst();
  /** mines one block at a time until the condition holds: the service's own transactions need confirmations too */
  const mineUntil = async (condition: () => Promise<boolean>, what: string, timeoutMs = 60_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await anvil.mine(1);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  };

  it('the gateway fails over past an endpoint that does not answer, refuses one serving another chain, and reports node refusals', async () => {
    const unreachable = 'http://127.0.0.1:9'; // nothing listens on the discard port
    const gateway = createEvmGateway(findChain(ETHEREUM)!, { rpcUrls: [unreachable, anvil.url], rpcTimeoutMs: 2_000 });
    expect((await gateway.head()).number).toBe(await anvil.head());
    const broke = Wallet.createRandom();
    const raw = await broke.signTransaction({ type: 2, chainId: 1, nonce: 0, to: anvil.funded.address, value: 1n, gasLimit: 21_000n, maxFeePerGas: 10n ** 10n, maxPriorityFeePerGas: 10n ** 9n });
    await expect(gateway.broadcast(raw)).rejects.toBeInstanceOf(BroadcastRejectedError);
    expect(await gateway.transactionStatus(`0x${'ab'.repeat(32)}`)).toEqual({ status: 'not_found' });
    gateway.close();
    const polygon = createEvmGateway(findChain('eip155:137')!, { rpcUrls: [anvil.url], rpcTimeoutMs: 2_000 });
    await expect(polygon.head()).rejects.toThrow(/serves chain id 1, not 137/);
    polygon.close();
  });

  it('GET /chains shows Ethereum enabled with the configured confirmations', async () => {
    const { chain } = (await request('GET', `/chains/${ETHEREUM}`)) as { chain: unknown };
    expect(chain).toMatchObject({ id: ETHEREUM, enabled: true, properties: { confirmations: CONFIRMATIONS } });
    expect(service.composed.gateways(ETHEREUM)!.chain.properties.confirmations).toBe(CONFIRMATIONS);
  });

  it('an ETH deposit is detected at 0 confirmations, confirmed and credited at 3, then swept net of its fee', async () => {
    const address = await depositAddress(ETH, 'eth-user');
    const sent = await anvil.funded.sendTransaction({ to: address, value: ETHER });
    const mined = (await sent.wait())!;

    await waitUntil(async () => (await depositRow(sent.hash, 0)) !== undefined, 20_000, 'the ETH deposit detected');
    expect(await depositRow(sent.hash, 0)).toMatchObject({ amount: ETHER.toString(), confirmed: false, credit: 'credit', block_hash: mined.blockHash });
    await waitUntil(async () => (await balanceOf(ETH)).pending === ETHER, 20_000, 'pending 1 ETH');
    expect((await balanceOf(ETH)).available).toBe(0n);

    await anvil.mine(CONFIRMATIONS - 1); // the including block is the first confirmation
    await waitUntil(async () => (await depositRow(sent.hash, 0))?.confirmed === true, 20_000, 'the ETH deposit confirmed');
    expect((await depositRow(sent.hash, 0))!.confirmations).toBe(CONFIRMATIONS);

    // the sweeper sends it to the settlement wallet; its fee is charged to the organization's balance
    await mineUntil(async () => (await sweepRow(sent.hash))?.status === 'Confirmed', 'the ETH sweep confirmed');
    const sweep = (await sweepRow(sent.hash))!;
    const fee = BigInt(sweep.fee_charged!);
    expect(fee).toBeGreaterThan(0n);
    const swept = BigInt(sweep.swept_amount!);
    // sent: the deposit less the fee's estimate (gasLimit × maxFeePerGas); charged: what the chain took
    expect(await anvil.provider.getBalance(sweep.settlement_address)).toBe(swept);
    expect(await anvil.provider.getBalance(address)).toBe(ETHER - swept - fee);
    await waitUntil(async () => (await balanceOf(ETH)).available === ETHER - fee, 20_000, 'ETH available net of the sweep fee');
  });

  let settlement: string;
  it('a token deposit is credited; its sweep waits for gas, gets a top-up from the funded gas wallet and lands in the settlement wallet', async () => {
    const address = await depositAddress(USDT, 'usdt-user');
    await (await token.getFunction('mint')(anvil.funded.address, 100_000_000n)).wait();
    const sent = await token.getFunction('transfer')(address, 25_000_000n);
    await sent.wait();
    const logIndex = 0; // the transfer is its transaction's first log: its index within the transaction

    await waitUntil(async () => (await depositRow(sent.hash, logIndex)) !== undefined, 20_000, 'the USDT deposit detected');
    expect(await depositRow(sent.hash, logIndex)).toMatchObject({ token_id: USDT, amount: '25000000', confirmed: false });
    await anvil.mine(CONFIRMATIONS - 1);
    await waitUntil(async () => (await balanceOf(USDT)).available === 25_000_000n, 20_000, 'USDT credited');

    // the gas wallet is empty: the token sweep waits
    await waitUntil(async () => (await sweepRow(sent.hash))?.status === 'WaitingForGas', 20_000, 'the USDT sweep waiting for gas');
    const { gasWallets } = (await request('GET', '/gas-station')) as { gasWallets: { chainId: string; address: string; balance: string }[] };
    const gasWallet = gasWallets.find((wallet) => wallet.chainId === ETHEREUM)!;
    expect(gasWallet.balance).toBe('0');
    await (await anvil.funded.sendTransaction({ to: gasWallet.address, value: ETHER })).wait();
    service.advance(31_000); // the sweeper looks at a sweep waiting for gas again 30 s later, by the service's clock

    await mineUntil(async () => (await sweepRow(sent.hash))?.status === 'Confirmed', 'the USDT sweep confirmed', 90_000);
    const sweep = (await sweepRow(sent.hash))!;
    expect(BigInt(sweep.top_up_amount!)).toBeGreaterThan(0n);
    settlement = sweep.settlement_address;
    expect(await token.getFunction('balanceOf')(settlement)).toBe(25_000_000n);
    expect(await token.getFunction('balanceOf')(address)).toBe(0n);
    // the top-up was the service moving its own gas: never a deposit
    const deposits = await service.infrastructure.db.selectFrom('deposits').select('tx_hash').where('to_address', 'ilike', address).execute();
    expect(deposits.map((row) => row.tx_hash)).toEqual([sent.hash.toLowerCase()]);
    // the operator's gas, not the organization's USDT
    expect((await balanceOf(USDT)).available).toBe(25_000_000n);
  });

  it('a USDT withdrawal is signed, broadcast, confirmed and completed; the recipient holds the tokens', async () => {
    const recipient = Wallet.createRandom().address;
    const { withdrawal } = (await request('POST', '/withdrawals', { chainId: ETHEREUM, tokenId: USDT, amount: '10000000', recipient, reference: 'anvil-1' })) as { withdrawal: { id: string; status: string } };
    expect(withdrawal.status).toBe('Pending');
    const read = async () => (await request('GET', `/withdrawals/${withdrawal.id}`)) as { status: string; txnHash: string | null; txnError: string | null };
    await mineUntil(async () => (await read()).status === 'Completed' || (await read()).status === 'Failed', 'the withdrawal completed', 90_000);
    const completed = await read();
    expect(completed).toMatchObject({ status: 'Completed', txnError: null });
    const receipt = (await anvil.provider.getTransactionReceipt(completed.txnHash!))!;
    expect(receipt.status).toBe(1);
    expect(await token.getFunction('balanceOf')(recipient)).toBe(10_000_000n);
    expect(await token.getFunction('balanceOf')(settlement)).toBe(15_000_000n);
    await waitUntil(async () => (await balanceOf(USDT)).available === 15_000_000n, 20_000, 'USDT available after the withdrawal');
  });

  it('a deposit whose block a reorg abandons before its confirmations is reverted and never credited', async () => {
    const before = await balanceOf(ETH);
    const address = await depositAddress(ETH, 'reorg-user');
    const sent = await anvil.funded.sendTransaction({ to: address, value: ETHER / 2n });
    const mined = (await sent.wait())!;
    await waitUntil(async () => (await depositRow(sent.hash, 0)) !== undefined, 20_000, 'the deposit detected');
    await waitUntil(async () => (await balanceOf(ETH)).pending === before.pending + ETHER / 2n, 20_000, 'pending 0.5 ETH');

    // replace every block from the deposit's up: the transaction is gone from the chain
    const depth = (await anvil.head()) - mined.blockNumber + 1;
    expect(depth).toBeLessThan(CONFIRMATIONS);
    await anvil.provider.send('anvil_reorg', [depth, []]);
    expect(await anvil.provider.getTransactionReceipt(sent.hash)).toBeNull();

    await waitUntil(async () => (await depositState(sent.hash, 0)).status === 'Reverted', 20_000, 'the deposit reverted');
    await anvil.mine(CONFIRMATIONS * 2);
    await new Promise((resolve) => setTimeout(resolve, 2_000)); // the watcher passes over the new blocks
    expect((await depositState(sent.hash, 0)).status).toBe('Reverted');
    expect(await depositRow(sent.hash, 0)).toMatchObject({ status: 'reverted', confirmed: false }); // listed as reverted, never credited
    expect(await balanceOf(ETH)).toEqual(before);
    expect(await anvil.provider.getBalance(address)).toBe(0n);
  });

  it('a token transfer a reorg deeper than the confirmations mines again at another log index of its block is credited once', async () => {
    const address = await depositAddress(USDT, 'relog-user');
    await (await token.getFunction('mint')(anvil.funded.address, 10_000_000n)).wait();
    const before = await balanceOf(USDT);
    const sent = (await token.getFunction('transfer')(address, 4_000_000n)) as TransactionResponse;
    const mined = (await sent.wait())!;
    const raw = await anvil.provider.send('eth_getRawTransactionByHash', [sent.hash]);
    expect(mined.logs.map((log) => log.index)).toEqual([0]); // alone in its block: the block's first log
    await waitUntil(async () => (await depositRow(sent.hash, 0)) !== undefined, 20_000, 'the USDT deposit detected');
    await anvil.mine(CONFIRMATIONS - 1);
    await waitUntil(async () => (await balanceOf(USDT)).available === before.available + 4_000_000n, 20_000, 'USDT credited');

    // every block from the transfer's up replaced (as deep as the confirmations: it was credited) ...
    const depth = (await anvil.head()) - mined.blockNumber + 1;
    expect(depth).toBeGreaterThanOrEqual(CONFIRMATIONS);
    await anvil.provider.send('anvil_reorg', [depth, []]);
    expect(await anvil.provider.getTransactionReceipt(sent.hash)).toBeNull();
    // ... and the new chain mines the same transaction again, after another account's token transfer in its block
    await anvil.provider.send('evm_setAutomine', [false]);
    try {
      const other = new Wallet(SECOND_ANVIL_KEY, anvil.provider);
      const fees = { maxPriorityFeePerGas: 50n * 10n ** 9n, maxFeePerGas: 200n * 10n ** 9n }; // ahead of the transfer in the block
      await (token.connect(other) as Contract).getFunction('mint')(other.address, 1n, fees);
      await anvil.provider.send('eth_sendRawTransaction', [raw]);
      await anvil.provider.send('evm_mine', []);
    } finally {
      await anvil.provider.send('evm_setAutomine', [true]);
    }
    const again = (await anvil.provider.getTransactionReceipt(sent.hash))!;
    expect(again.logs.map((log) => log.index)).toEqual([1]); // another block-wide log index, the same index within the transaction
    await anvil.mine(CONFIRMATIONS * 2);
    const head = await anvil.head();
    await waitUntil(async () => (await watcherCursor()) > head, 20_000, 'the watcher past the new blocks');

    expect(await balanceOf(USDT)).toEqual({ available: before.available + 4_000_000n, pending: before.pending });
    const rows = await service.infrastructure.db.selectFrom('deposits').select(['output_index', 'status']).where('tx_hash', '=', sent.hash.toLowerCase()).execute();
    expect(rows).toEqual([{ output_index: 0, status: 'confirmed' }]);
  });
});
