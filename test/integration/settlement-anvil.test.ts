import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { generateMnemonic } from 'bip39';
import { Wallet, type Contract } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSigner } from '../../src/chains/signer/signer.js';
import { startAnvil, placeTestToken, type Anvil } from '../support/anvil.js';
import { createProxyScript, startRpcProxy, type RpcProxy, type SentTransaction } from '../support/rpc-proxy.js';
import { startTestService, type TestService } from '../support/api-harness.js';
import { waitUntil } from '../support/webhook-receiver.js';

const ETHEREUM = 'eip155:1';
const USDT_CONTRACT = '0xdac17f958d2ee523a2206206994597c13d831ec7';
const USDT = `${ETHEREUM}/erc20:${USDT_CONTRACT}`;
const CONFIRMATIONS = 3;
const ETHER = 10n ** 18n;
const NONCE_TOO_LOW = 'nonce too low: next nonce 1, tx nonce 0';

/**
 * Settlement against a real node (anvil) behind two scripted endpoints, the service's failover
 * between them: answers lost after the node took the bytes, a second endpoint that has not seen
 * the transaction yet and then answers "nonce too low", a time-out, and a genuine refusal. For
 * each of a withdrawal, a sweep and a gas top-up: exactly one payment on chain, the ledger equals
 * the chain, and nothing is Failed whose payment happened.
 */
describe('settlement on a real node with faults: only proof fails a payment', { timeout: 180_000 }, () => {
  let anvil: Anvil;
  let token: Contract;
  let endpointA: RpcProxy;
  let endpointB: RpcProxy;
  /** the faults, whichever endpoint the failover asks */
  const script = createProxyScript();
  let service: TestService;
  let apiKey: string;
  let configDir: string;
  let gasWallet: string;

  beforeAll(async () => {
    anvil = await startAnvil(1);
    token = await placeTestToken(anvil, USDT_CONTRACT);
    [endpointA, endpointB] = await Promise.all([startRpcProxy(anvil.url, script), startRpcProxy(anvil.url, script)]);
    const mnemonic = generateMnemonic(256);
    configDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ledgergate-settlement-'));
    const configPath = path.join(configDir, 'chains.json');
    const accountXpub = createSigner(mnemonic).accountXpub('evm', 'mainnet');
    const chains = { [ETHEREUM]: { rpcUrls: [endpointA.url, endpointB.url], rpcTimeoutMs: 1_500, confirmations: CONFIRMATIONS, accountXpub, fees: { maxFeePerGasGwei: 50 } } };
    await fs.writeFile(configPath, JSON.stringify({ chains }));
    service = await startTestService({ CHAINS_CONFIG: configPath, LEDGERGATE_SIGNER_MNEMONIC: mnemonic, DEVNET_BLOCK_TIME_MS: '3600000', RATE_LIMIT_PER_MINUTE: '1000000' });
    apiKey = (await service.bootstrap('Acme', ['alice'])).apiKey;
    const { gasWallets } = (await request('GET', '/gas-station')) as { gasWallets: { chainId: string; address: string }[] };
    gasWallet = gasWallets.find((wallet) => wallet.chainId === ETHEREUM)!.address.toLowerCase();
    await (await anvil.funded.sendTransaction({ to: gasWallet, value: ETHER })).wait();
  }, 180_000);
  afterAll(async () => {
    await service?.stop();
    await endpointA?.stop();
    await endpointB?.stop();
    await anvil?.stop();
    if (configDir) await fs.rm(configDir, { recursive: true, force: true });
  });

  async function request(method: 'GET' | 'POST', url: string, body?: unknown) {
    const response = await service.request(method, url, { apiKey, ...(body === undefined ? {} : { body }) });
    expect(response.status, `${method} ${url} → ${JSON.stringify(response.body)}`).toBeLessThan(300);
    return response.body as Record<string, unknown>;
  }
  const available = async () => {
    const { balances } = (await request('GET', '/portfolio')) as { balances: { tokenId: string; available: string }[] };
    return BigInt(balances.find((entry) => entry.tokenId === USDT)?.available ?? '0');
  };
  const sweepRow = (txHash: string) => service.infrastructure.db.selectFrom('sweeps').selectAll().where('chain_id', '=', ETHEREUM).where('tx_hash', '=', txHash.toLowerCase()).executeTakeFirst();
  const mineUntil = async (condition: () => Promise<boolean>, what: string, timeoutMs = 90_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await anvil.mine(1);
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  };
  /** transactions an address has mined: its nonce at the head */
  const minedFrom = async (address: string) => Number(await anvil.provider.send('eth_getTransactionCount', [address, 'latest']));
  const from = (address: string) => (sent: SentTransaction) => sent.from === address.toLowerCase();
  /** the answer of endpoint A is lost or wrong, and B has not seen the transaction for a while: a failover's worst case */
  const loseAnswerOf = (address: string, fault: 'nonce too low' | 'time-out') => {
    const matches = from(address);
    script.faultNext(matches, fault === 'time-out' ? { kind: 'forward-then-hang' } : { kind: 'forward-then-answer', error: NONCE_TOO_LOW });
    // the next lookups of that transaction find nothing yet
    script.lag((hash) => script.forwarded.some((sent) => sent.hash === hash && matches(sent)), 2);
  };

  let settlement: string;

  it('a token deposit swept through a lost top-up answer and a sweep that timed out: one top-up, one sweep, the tokens in the settlement wallet', async () => {
    const { address: account } = (await request('GET', `/payments/deposit-address?${new URLSearchParams({ chainId: ETHEREUM, tokenId: USDT, userId: 'user-1' })}`)) as {
      address: { properties: { address: string } };
    };
    const depositAddress = account.properties.address;
    const gasSentBefore = await minedFrom(gasWallet);
    loseAnswerOf(gasWallet, 'nonce too low');
    loseAnswerOf(depositAddress, 'time-out');

    await (await token.getFunction('mint')(anvil.funded.address, 100_000_000n)).wait();
    const sent = await token.getFunction('transfer')(depositAddress, 40_000_000n);
    await sent.wait();
    await anvil.mine(CONFIRMATIONS);
    await waitUntil(async () => (await available()) === 40_000_000n, 30_000, 'USDT credited');
    await mineUntil(async () => ['Confirmed', 'Failed'].includes((await sweepRow(sent.hash))?.status ?? ''), 'the sweep settled');

    const sweep = (await sweepRow(sent.hash))!;
    expect(sweep.status).toBe('Confirmed');
    settlement = sweep.settlement_address;
    expect(await token.getFunction('balanceOf')(settlement)).toBe(40_000_000n);
    expect(await token.getFunction('balanceOf')(depositAddress)).toBe(0n);
    expect(script.forwarded.filter(from(gasWallet)).length).toBeGreaterThan(gasSentBefore); // the faults met their transactions
    expect(await minedFrom(gasWallet)).toBe(gasSentBefore + 1); // one top-up, never a second for a lost answer
    expect(await minedFrom(depositAddress)).toBe(1); // one sweep
    expect(await available()).toBe(40_000_000n); // the ledger equals the chain: the settlement wallet holds it all
  });

  it('a withdrawal whose top-up and own answers are lost ("nonce too low" from the next endpoint) completes, paid once', async () => {
    const recipient = Wallet.createRandom().address;
    const gasSentBefore = await minedFrom(gasWallet);
    const settlementSentBefore = await minedFrom(settlement);
    loseAnswerOf(gasWallet, 'nonce too low');
    loseAnswerOf(settlement, 'nonce too low');
    const { withdrawal } = (await request('POST', '/withdrawals', { chainId: ETHEREUM, tokenId: USDT, amount: '10000000', recipient, reference: 'lost-answers' })) as { withdrawal: { id: string } };
    const read = async () => (await request('GET', `/withdrawals/${withdrawal.id}`)) as { status: string; txnError: string | null };
    await mineUntil(async () => ['Completed', 'Failed'].includes((await read()).status), 'the withdrawal settled');

    expect(await read()).toMatchObject({ status: 'Completed', txnError: null });
    expect(await token.getFunction('balanceOf')(recipient)).toBe(10_000_000n);
    expect(await minedFrom(settlement)).toBe(settlementSentBefore + 1); // one payment
    expect(await minedFrom(gasWallet)).toBe(gasSentBefore + 1); // one top-up
    await waitUntil(async () => (await available()) === 30_000_000n, 20_000, 'USDT available after the withdrawal');
    expect(await token.getFunction('balanceOf')(settlement)).toBe(30_000_000n); // ledger = chain
  });

  it('a withdrawal every node refuses is made impossible (its nonce taken back) before it fails: the hold released, nothing paid', async () => {
    const recipient = Wallet.createRandom().address;
    const settlementSentBefore = await minedFrom(settlement);
    script.faultNext(from(settlement), { kind: 'refuse', error: 'insufficient funds for gas * price + value' });
    const { withdrawal } = (await request('POST', '/withdrawals', { chainId: ETHEREUM, tokenId: USDT, amount: '5000000', recipient, reference: 'refused' })) as { withdrawal: { id: string } };
    const read = async () => (await request('GET', `/withdrawals/${withdrawal.id}`)) as { status: string; txnError: string | null; txnHash: string | null };
    await mineUntil(async () => ['Completed', 'Failed'].includes((await read()).status), 'the withdrawal settled');

    const failed = await read();
    expect(failed.status).toBe('Failed');
    expect(failed.txnError).toContain('insufficient funds');
    expect(failed.txnError).toContain('it can never be mined');
    expect(await token.getFunction('balanceOf')(recipient)).toBe(0n);
    expect(await anvil.provider.getTransactionReceipt(failed.txnHash!)).toBeNull(); // the refused payment never landed
    expect(await minedFrom(settlement)).toBe(settlementSentBefore + 1); // the cancellation took its nonce
    await waitUntil(async () => (await available()) === 30_000_000n, 20_000, 'the hold released');
    expect(await token.getFunction('balanceOf')(settlement)).toBe(30_000_000n);
  });

  it('a withdrawal mined and then reorged out before its depth is sent again as the same bytes: Completed once, never Failed', async () => {
    const recipient = Wallet.createRandom().address;
    const settlementSentBefore = await minedFrom(settlement);
    const { withdrawal } = (await request('POST', '/withdrawals', { chainId: ETHEREUM, tokenId: USDT, amount: '2000000', recipient, reference: 'reorged' })) as { withdrawal: { id: string } };
    const read = async () => (await request('GET', `/withdrawals/${withdrawal.id}`)) as { status: string; txnHash: string | null };
    // mined (anvil mines each transaction at once), not yet 3 deep
    await mineUntil(async () => {
      const current = await read();
      return current.status === 'Processing' && current.txnHash !== null && (await anvil.provider.getTransactionReceipt(current.txnHash)) !== null;
    }, 'the withdrawal mined');
    const { txnHash } = await read();
    const first = (await anvil.provider.getTransactionReceipt(txnHash!))!;
    // every block from the one that holds it up is replaced by empty ones: the transaction is on no
    // chain any more (the service may send it again at once, so it is not looked for in between)
    const depth = (await anvil.head()) - first.blockNumber + 1;
    expect(depth).toBeLessThan(CONFIRMATIONS);
    await anvil.provider.send('anvil_reorg', [depth, []]);
    await mineUntil(async () => ['Completed', 'Failed'].includes((await read()).status), 'the withdrawal settled');

    expect(await read()).toMatchObject({ status: 'Completed', txnHash });
    const again = (await anvil.provider.getTransactionReceipt(txnHash!))!;
    expect(again.status).toBe(1); // the same bytes, mined again: in another block
    expect(again.blockHash).not.toBe(first.blockHash);
    expect(await token.getFunction('balanceOf')(recipient)).toBe(2_000_000n);
    expect(await minedFrom(settlement)).toBe(settlementSentBefore + 1);
    await waitUntil(async () => (await available()) === 28_000_000n, 20_000, 'USDT available after the withdrawal');
    expect(await token.getFunction('balanceOf')(settlement)).toBe(28_000_000n);
  });
});
