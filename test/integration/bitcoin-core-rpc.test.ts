import { Transaction } from 'bitcoinjs-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bitcoinOwnOutputs } from '../../src/application/bitcoin-own-outputs.js';
import { getOrCreateDepositAccount } from '../../src/application/deposit-accounts.js';
import { createDepositAddressBook } from '../../src/chains/address-book.js';
import { BroadcastRejectedError, type ChainGateway } from '../../src/chains/gateway.js';
import { bitcoinTronXrpGatewayFactories } from '../../src/chains/node-gateways.js';
import { findChain } from '../../src/catalog/registry.js';
import { nativeToken } from '../../src/catalog/tokens.js';
import type { ChainDefinition } from '../../src/catalog/chain.js';
import type { WithdrawalRecord } from '../../src/domain/withdrawal/withdrawal.js';
import { ChainWatcher, WatcherLockSession } from '../../src/processes/deposit-watcher/index.js';
import { advanceWithdrawal } from '../../src/processes/withdrawal-processor/advance.js';
import { DEFAULT_REPLACE_AFTER_BLOCKS } from '../../src/processes/withdrawal-processor/replacement.js';
import { bitcoinWalletsOf } from '../../src/processes/withdrawal-processor/transactions.js';
import { externalAddress, startChainWorkerFixture, type ChainWorkerFixture } from '../support/chain-workers.js';
import { startRegtestNode, type RegtestNode } from '../support/bitcoin-regtest.js';

const BITCOIN_TESTNET = 'bip122:000000000933ea01ad0ee984209779ba';
/** the catalog's testnet waits 1 confirmation; 2 (mainnet's) leaves room for a reorg before a deposit is confirmed */
const CONFIRMATIONS = 2;
const chain: ChainDefinition = { ...findChain(BITCOIN_TESTNET)!, properties: { ...findChain(BITCOIN_TESTNET)!.properties, confirmations: CONFIRMATIONS } };
const tbtc = nativeToken(BITCOIN_TESTNET);
const meta = { actor: 'test' };

/**
 * The Bitcoin Core gateway end to end on an independent full node (bcoin, regtest, in this
 * process; test/support/bitcoin-regtest.ts bridges where it answers unlike Core): the deposit
 * watcher and the withdrawal processor over the gateway, the node deciding what is valid.
 */
describe('Bitcoin over Core JSON-RPC, on an in-process bcoin regtest node', { timeout: 120_000 }, () => {
  let fixture: ChainWorkerFixture;
  let regtest: RegtestNode;
  let gateway: ChainGateway;
  let watcher: ChainWatcher;
  let locks: WatcherLockSession;
  let users = 0;

  beforeAll(async () => {
    [fixture, regtest] = await Promise.all([startChainWorkerFixture('bitcoin_core', { projections: 'running', referencePrefix: 'core' }), startRegtestNode()]);
    const settings = { kind: 'rpc' as const, rpcUrls: [regtest.url], rpcAuth: regtest.rpcAuth, rpcTimeoutMs: 5_000, fees: { minFeeRateSatPerVbyte: 2 } };
    gateway = bitcoinTronXrpGatewayFactories().bitcoin!(chain, settings, fixture.logger, { bitcoinOwnOutputs: bitcoinOwnOutputs(fixture.infrastructure.db) });
    locks = new WatcherLockSession(fixture.infrastructure.databaseTarget, fixture.logger);
    const startBlock = (await gateway.head()).number;
    watcher = new ChainWatcher({ gateway, services: { store: fixture.infrastructure.store, clock: fixture.clock }, db: fixture.infrastructure.db, locks, logger: fixture.logger, pollIntervalMs: 20, startBlock });
  }, 120_000);
  afterAll(async () => {
    await locks?.close();
    await regtest?.stop();
    await fixture?.stop();
  });

  const catchUp = async () => {
    expect(await watcher.catchUp()).toBe(true);
    for (const runner of fixture.runners) await runner.catchUp();
  };
  const depositAddress = async () => {
    const addresses = createDepositAddressBook(fixture.infrastructure.signer!);
    const { account } = await getOrCreateDepositAccount({ store: fixture.infrastructure.store, clock: fixture.clock, addresses }, { orgId: fixture.orgId, chainId: BITCOIN_TESTNET, externalUserId: `user-${++users}` }, meta);
    return account.properties.address;
  };
  const depositEvents = async (txHash: string) =>
    (await fixture.infrastructure.store.readAll({ filter: { categories: ['deposit'] }, maxCount: 10_000 })).filter((event) => event.data.txHash === txHash).map((event) => event.type);
  const ledger = () => fixture.ledger(tbtc.id);
  const processing = () => fixture.workerServices(BITCOIN_TESTNET, { chain, gateway });
  const withdraw = (amount: bigint, recipient: string) => fixture.withdraw({ chainId: BITCOIN_TESTNET, tokenId: tbtc.id, amount, recipient }, { gateways: () => gateway });
  const withdrawal = async (id: string): Promise<WithdrawalRecord> => {
    const state = await fixture.withdrawal(id);
    if (state.status === 'None') throw new Error(`no withdrawal ${id}`);
    return state;
  };
  /** a withdrawal step, as the processor takes it, with the read models it reads caught up */
  const advance = async (id: string) => {
    for (const runner of fixture.runners) await runner.catchUp();
    await advanceWithdrawal(processing(), id);
    return withdrawal(id);
  };
  /** what the node says of a transaction: in its mempool, in a block of its best chain, or unknown */
  const onNode = async (txid: string) => {
    if (regtest.inMempool(txid)) return 'mempool';
    try {
      const tx = await regtest.rpc<{ confirmations?: number }>('getrawtransaction', [txid, true]);
      return (tx.confirmations ?? 0) > 0 ? 'mined' : 'known';
    } catch {
      return 'unknown';
    }
  };

  it('a deposit to a deposit address: detected in its block, confirmed at depth, credited once', async () => {
    const address = await depositAddress();
    const before = await ledger();
    const { txid, answer } = await regtest.pay(address, 50_000_000n);
    expect(answer.error).toBeNull();
    await regtest.mine(1);
    await catchUp();
    expect(await depositEvents(txid)).toEqual(['DepositDetected']);
    expect(await ledger()).toMatchObject({ pending: before.pending + 50_000_000n, available: before.available });

    await regtest.mine(CONFIRMATIONS - 1);
    await catchUp();
    expect(await depositEvents(txid)).toEqual(['DepositDetected', 'DepositConfirmed']);
    expect(await ledger()).toMatchObject({ pending: before.pending, available: before.available + 50_000_000n });
    expect(await gateway.unspentOutputs([address])).toEqual([{ txHash: txid, index: 0, address, amount: 50_000_000n, confirmations: CONFIRMATIONS }]);
    expect(await gateway.balance(address, 'native')).toBe(50_000_000n);
  });

  it('a deposit whose block a reorg abandons before its confirmation (its coin spent elsewhere in the new chain): reverted, never credited', async () => {
    const address = await depositAddress();
    const before = await ledger();
    const forkPoint = regtest.tip();
    const { txid } = await regtest.pay(address, 30_000_000n);
    await regtest.mine(1);
    await catchUp();
    expect(await depositEvents(txid)).toEqual(['DepositDetected']);

    // a longer chain from the block before, where the payer took the coin back
    const doubleSpend = await regtest.reorg(forkPoint, 2, txid);
    await catchUp();
    expect(await depositEvents(txid)).toEqual(['DepositDetected', 'DepositReverted']);
    expect(await onNode(txid)).toBe('unknown');
    expect(await onNode(doubleSpend.txid)).toBe('mined');
    expect(await ledger()).toMatchObject({ pending: before.pending, available: before.available });
    expect(await gateway.unspentOutputs([address])).toEqual([]);
  });

  it('a withdrawal: signed from the organization\'s outputs, accepted by the node\'s mempool, mined and completed', async () => {
    const recipient = externalAddress(BITCOIN_TESTNET);
    const before = await ledger();
    const created = await withdraw(10_000_000n, recipient);
    const sent = await advance(created.id);
    expect(sent).toMatchObject({ status: 'Processing' });
    const txHash = sent.signedTransaction!.txHash;
    expect(await onNode(txHash)).toBe('mempool');
    expect(await gateway.transactionStatus(txHash)).toEqual({ status: 'pending' });

    await regtest.mine(CONFIRMATIONS);
    const completed = await advance(created.id);
    expect(completed).toMatchObject({ status: 'Completed', txnHash: txHash, fee: sent.signedTransaction!.fee });
    const status = await gateway.transactionStatus(txHash);
    expect(status).toMatchObject({ status: 'confirmed', confirmations: CONFIRMATIONS, fee: BigInt(sent.signedTransaction!.fee) });
    expect(await ledger()).toMatchObject({ available: before.available - 10_000_000n - BigInt(sent.signedTransaction!.fee), held: before.held });
    // the recipient's output on the node's UTXO set, and the change back as a spendable output of the organization
    const paid = Transaction.fromHex(sent.signedTransaction!.raw).outs.map((output, index) => ({ output, index }));
    const recipientOutput = await regtest.rpc<{ value: number } | null>('gettxout', [txHash, paid[0]!.index, false]);
    expect(Math.round(recipientOutput!.value * 1e8)).toBe(10_000_000);
    const { changeAddress } = await bitcoinWalletsOf(processing(), fixture.orgId);
    expect((await gateway.unspentOutputs([changeAddress])).map((output) => output.txHash)).toEqual([txHash]);
  });

  it('a withdrawal stuck in the mempool is replaced by fee (BIP125): the node swaps them, exactly one is mined', async () => {
    const recipient = externalAddress(BITCOIN_TESTNET);
    const before = await ledger();
    const created = await withdraw(5_000_000n, recipient);
    const original = (await advance(created.id)).signedTransaction!;
    expect(await onNode(original.txHash)).toBe('mempool');

    await regtest.mine(DEFAULT_REPLACE_AFTER_BLOCKS, { withMempool: false }); // blocks that pass it by
    const replaced = await advance(created.id);
    const replacement = replaced.signedTransaction!;
    expect(replacement.txHash).not.toBe(original.txHash);
    expect(replaced).toMatchObject({ status: 'Processing', replacedTransactions: [{ txHash: original.txHash }] });
    expect(await onNode(replacement.txHash)).toBe('mempool');
    expect(await onNode(original.txHash)).toBe('unknown');

    await regtest.mine(CONFIRMATIONS);
    expect(await advance(created.id)).toMatchObject({ status: 'Completed', txnHash: replacement.txHash, fee: replacement.fee });
    expect(await onNode(replacement.txHash)).toBe('mined');
    expect(await onNode(original.txHash)).toBe('unknown');
    expect(await gateway.transactionStatus(original.txHash)).toEqual({ status: 'not_found' });
    expect(await ledger()).toMatchObject({ available: before.available - 5_000_000n - BigInt(replacement.fee), held: before.held });
    // what the service asks the node about: the mined replacement's change, not the original's nor the inputs they spent
    for (const runner of fixture.runners) await runner.catchUp();
    const { byAddress } = await bitcoinWalletsOf(processing(), fixture.orgId);
    const asked = await bitcoinOwnOutputs(fixture.infrastructure.db)(BITCOIN_TESTNET, [...byAddress.keys()]);
    expect(asked.map((output) => output.txHash)).not.toContain(original.txHash);
    expect(asked.map((output) => `${output.txHash}:${output.index}`)).not.toContain(`${original.inputs![0]!.txHash}:${original.inputs![0]!.index}`);
    expect(asked.map((output) => output.txHash)).toContain(replacement.txHash);
  });

  it('a double spend: refused by the node and read as a conflict; once the first spend is deep, proven never to happen', async () => {
    const [completed] = await fixture.infrastructure.db.selectFrom('withdrawals').select('state').where('chain_id', '=', BITCOIN_TESTNET).where('status', '=', 'Completed').execute();
    const spent = completed!.state.signedTransaction!.inputs![0]!;
    const { byAddress } = await bitcoinWalletsOf(processing(), fixture.orgId);
    const again = fixture.infrastructure.signer!.signBitcoinTransfer(
      chain,
      [{ wallet: byAddress.get(spent.address)!, txHash: spent.txHash, index: spent.index, amount: BigInt(spent.amount) }],
      [{ address: externalAddress(BITCOIN_TESTNET), amount: BigInt(spent.amount) - 10_000n }],
    );
    const refusal = await gateway.broadcast(again.raw).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(BroadcastRejectedError);
    expect(refusal).toMatchObject({ refusal: 'conflict', message: expect.stringContaining('bad-txns-inputs-missingorspent') });
    expect(await onNode(again.txHash)).toBe('unknown');
    expect(await gateway.provablyNever(again.raw)).toMatch(new RegExp(`^its input ${spent.txHash}:${spent.index} was spent by another transaction, at least ${CONFIRMATIONS} blocks deep$`));

    // against a transaction in the mempool that signals no replacement and pays more: Core's txn-mempool-conflict, a conflict too
    const address = await depositAddress();
    const { txid } = await regtest.pay(address, 1_000_000n);
    await regtest.mine(CONFIRMATIONS);
    await catchUp();
    const wallet = (await bitcoinWalletsOf(processing(), fixture.orgId)).byAddress.get(address)!;
    const sign = (sequence: number, fee: bigint) =>
      fixture.infrastructure.signer!.signBitcoinTransfer(chain, [{ wallet, txHash: txid, index: 0, amount: 1_000_000n, sequence }], [{ address: externalAddress(BITCOIN_TESTNET), amount: 1_000_000n - fee }]);
    const first = sign(0xffffffff, 5_000n);
    expect(await gateway.broadcast(first.raw)).toEqual({ txHash: first.txHash });
    expect(await gateway.broadcast(first.raw)).toEqual({ txHash: first.txHash }); // the same bytes again: known
    const second = sign(0xffffffff, 50_000n);
    await expect(gateway.broadcast(second.raw)).rejects.toMatchObject({ refusal: 'conflict', message: expect.stringContaining('txn-mempool-conflict') });
    expect(await gateway.provablyNever(second.raw)).toBeNull(); // the first is not even mined: nothing proven
  });
});
