import ecc from '@bitcoinerlab/secp256k1';
import { Transaction } from 'bitcoinjs-lib';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadAggregate } from '../../src/application/command-handler.js';
import { getOrCreateDepositAccount } from '../../src/application/deposit-accounts.js';
import { confirmDeposit, recordDeposit } from '../../src/application/deposits.js';
import { createOrganizationWallets, type OrganizationWallets } from '../../src/application/organization-wallets.js';
import { bootstrapOrganization } from '../../src/application/organizations.js';
import { advanceWithdrawal, type WithdrawalProcessingServices } from '../../src/application/withdrawal-processing.js';
import { createWithdrawal } from '../../src/application/withdrawals.js';
import { withdrawalHistory } from '../../src/audit/withdrawal-history.js';
import { createDepositAddressBook } from '../../src/chains/address-book.js';
import { chainAvailability } from '../../src/chains/availability.js';
import { createDevnet, devnetDb, type Devnet } from '../../src/chains/devnet/index.js';
import { addressCodecs } from '../../src/chains/families.js';
import { WithdrawalProcessor } from '../../src/chains/processor/index.js';
import { DEFAULT_REPLACE_AFTER_BLOCKS } from '../../src/chains/processor/replacement.js';
import { findChain } from '../../src/chains/registry.js';
import { nativeToken } from '../../src/chains/tokens.js';
import { loadConfig } from '../../src/config/env.js';
import { ledgerDecider } from '../../src/domain/ledger/decide.js';
import { streams } from '../../src/domain/streams.js';
import { withdrawalDecider } from '../../src/domain/withdrawal/decide.js';
import type { WithdrawalRecord } from '../../src/domain/withdrawal/withdrawal.js';
import { connectInfrastructure, type Infrastructure } from '../../src/infrastructure.js';
import { createLogger } from '../../src/log.js';
import { allProjections } from '../../src/projections/registry.js';
import { ProjectionRunner } from '../../src/projections/runner.js';
import { createTestDatabase } from '../support/database.js';

const BITCOIN = 'bip122:000000000019d6689c085ae165831e93';
const bitcoin = findChain(BITCOIN)!;
const btc = nativeToken(BITCOIN);
/** above the devnet's 10 sat/vB estimate: what the withdrawal pays stays in the mempool while blocks go by */
const RISEN_FEE_RATE = 11n;

const externalAddress = () => {
  let publicKey: Uint8Array | null = null;
  while (!publicKey) publicKey = ecc.pointFromScalar(randomBytes(32), true);
  return addressCodecs.bitcoin.addressFromPublicKey(publicKey, bitcoin.network);
};

/**
 * Replace-by-fee through the withdrawal processor on the devnet: the devnet's blocks leave out
 * transactions under a fee rate (a fee market that rose), so the withdrawal's transaction stays
 * unconfirmed; blocks are mined only by the test.
 */
describe('withdrawal processor: Bitcoin replace-by-fee', () => {
  let infrastructure: Infrastructure;
  let devnet: Devnet;
  let wallets: OrganizationWallets;
  let runners: ProjectionRunner[];
  let orgId: string;
  let userId: string;
  const clock = () => new Date('2026-11-22T10:00:00.000Z');
  const logger = createLogger('silent');
  const meta = { actor: 'test' };
  let users = 0;
  let references = 0;

  beforeAll(async () => {
    const database = await createTestDatabase('withdrawal_rbf');
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ledgergate-rbf-'));
    const config = loadConfig({ DATA_DIR: dataDir, LEDGERGATE_SECRET_KEY: randomBytes(32).toString('base64'), LOG_LEVEL: 'silent', DEVNET_BLOCK_TIME_MS: '3600000' });
    infrastructure = await connectInfrastructure(database.config, config, logger, 'test', async () => {
      await database.drop();
      await fs.rm(dataDir, { recursive: true, force: true });
    });
    devnet = createDevnet({ db: infrastructure.db, clock, blockTimeMs: 3_600_000, logger });
    wallets = createOrganizationWallets({ store: infrastructure.store, clock, signer: infrastructure.signer! });
    // the processor finds the organization's deposit addresses in the accounts read model
    runners = allProjections().map((projection) => new ProjectionRunner({ projection, store: infrastructure.store, database: infrastructure.databaseTarget, logger }));
    runners.forEach((runner) => runner.start());
    const services = { store: infrastructure.store, db: infrastructure.db, keyring: infrastructure.keyring, clock, isProduction: false };
    const bootstrapped = await bootstrapOrganization(services, { name: 'Acme', usernames: ['alice'] }, meta);
    orgId = bootstrapped.organization.id;
    userId = bootstrapped.users[0]!.id;
  });
  afterAll(async () => {
    devnet?.controls(BITCOIN).setMinimumMinedFeeRate(null);
    await Promise.all(runners.map((runner) => runner.stop()));
    await infrastructure.close();
  });
  beforeEach(() => devnet.controls(BITCOIN).setMinimumMinedFeeRate(null));

  const processing = (overrides: Partial<WithdrawalProcessingServices> = {}): WithdrawalProcessingServices => ({
    chain: bitcoin,
    gateway: devnet.gateway(BITCOIN),
    signer: infrastructure.signer!,
    wallets,
    store: infrastructure.store,
    clock,
    db: infrastructure.db,
    logger,
    ...overrides,
  });
  const processor = (overrides: Partial<WithdrawalProcessingServices> = {}) =>
    new WithdrawalProcessor({ services: processing(overrides), database: infrastructure.databaseTarget, failureDelayMs: () => 0, pollMs: 50 });
  const withdraw = (amount: bigint, recipient: string) =>
    createWithdrawal(
      {
        store: infrastructure.store,
        db: infrastructure.db,
        keyring: infrastructure.keyring,
        clock,
        isProduction: false,
        availability: chainAvailability({ isProduction: false }),
        gateways: (chainId) => devnet.gateway(chainId),
        wallets,
      },
      { orgId, userId },
      { chainId: BITCOIN, tokenId: btc.id, amount: amount.toString(), recipient, reference: `rbf-${++references}` },
      meta,
    );
  /** a deposit to a new user's address, mined, recorded, confirmed and credited */
  const deposit = async (amount: bigint) => {
    const externalUserId = `user-${++users}`;
    const { account } = await getOrCreateDepositAccount({ store: infrastructure.store, clock, addresses: createDepositAddressBook(infrastructure.signer!) }, { orgId, chainId: BITCOIN, externalUserId }, meta);
    const address = account.properties.address;
    const { txHash, blockNumber } = await devnet.controls(BITCOIN).deposit({ toAddress: address, asset: 'native', amount });
    const [transfer] = (await devnet.gateway(BITCOIN).transfersInBlock(blockNumber, new Set([address]))).filter((found) => found.txHash === txHash);
    await recordDeposit({ store: infrastructure.store, clock }, { ...transfer!, chainId: BITCOIN }, { orgId, externalUserId, accountChainId: BITCOIN }, meta);
    await devnet.controls(BITCOIN).mine(bitcoin.properties.confirmations);
    await confirmDeposit({ store: infrastructure.store, clock }, { chainId: BITCOIN, txHash: transfer!.txHash, index: transfer!.index }, bitcoin.properties.confirmations, meta);
    for (const runner of runners) await runner.catchUp();
  };
  const ledger = async () => (await loadAggregate(infrastructure.store, streams.ledger(orgId, btc.id), ledgerDecider)).state;
  const withdrawal = async (id: string): Promise<WithdrawalRecord> => {
    const { state } = await loadAggregate(infrastructure.store, streams.withdrawal(id), withdrawalDecider);
    if (state.status === 'None') throw new Error(`no withdrawal ${id}`);
    return state;
  };
  const mine = (count: number) => devnet.controls(BITCOIN).mine(count);
  /** every transaction paying the recipient that the devnet ever accepted, with its status there */
  const paymentsTo = async (recipient: string) => {
    const { rows } = await sql<{ hash: string; status: string; amount: string }>`
      select x.hash, x.status, t.amount from devnet_transfers t join devnet_transactions x on x.chain_id = t.chain_id and x.hash = t.tx_hash
       where t.chain_id = ${BITCOIN} and t.to_address = ${recipient} order by x.seq`.execute(devnetDb(infrastructure.db));
    return rows;
  };
  const vsizeOf = (raw: string) => BigInt(Transaction.fromHex(raw).virtualSize());

  /** funds, a withdrawal broadcast at the devnet's estimate, kept unmined by a risen fee market */
  const stuckWithdrawal = async (amount: bigint) => {
    await deposit(amount + 50_000n);
    const before = await ledger();
    const recipient = externalAddress();
    const created = await withdraw(amount, recipient);
    devnet.controls(BITCOIN).setMinimumMinedFeeRate(RISEN_FEE_RATE);
    await advanceWithdrawal(processing(), created.id);
    const sent = await withdrawal(created.id);
    expect(sent).toMatchObject({ status: 'Processing' });
    return { before, recipient, id: created.id, original: sent.signedTransaction! };
  };

  it('a withdrawal unconfirmed for 6 blocks is replaced by fee; the replacement confirms and completes it, paid once', async () => {
    const { before, recipient, id, original } = await stuckWithdrawal(70_000n);
    const worker = processor();
    await mine(DEFAULT_REPLACE_AFTER_BLOCKS - 1);
    await worker.runPass();
    expect(await withdrawal(id)).toMatchObject({ status: 'Processing', txnHash: original.txHash, signedTransaction: { txHash: original.txHash } });

    await mine(1);
    await worker.runPass();
    const replaced = await withdrawal(id);
    const replacement = replaced.signedTransaction!;
    expect(replacement.txHash).not.toBe(original.txHash);
    expect(replaced).toMatchObject({ status: 'Processing', txnHash: replacement.txHash, replacedTransactions: [{ txHash: original.txHash }] });
    // BIP125: more than the original by 1 sat/vB of its size (the devnet's estimate did not rise), from the change
    expect(BigInt(replacement.fee)).toBe(BigInt(original.fee) + vsizeOf(original.raw));
    const gateway = devnet.gateway(BITCOIN);
    expect(await gateway.transactionStatus(original.txHash)).toEqual({ status: 'not_found' });
    expect(await gateway.transactionStatus(replacement.txHash)).toEqual({ status: 'pending' });

    await mine(bitcoin.properties.confirmations);
    await worker.runPass();
    expect(await withdrawal(id)).toMatchObject({ status: 'Completed', txnHash: replacement.txHash, fee: replacement.fee });
    expect(await ledger()).toMatchObject({ available: before.available - 70_000n - BigInt(replacement.fee), held: before.held });
    // one payment: the replaced transaction never reached a block
    expect((await paymentsTo(recipient)).map(({ hash, status }) => ({ hash, status }))).toEqual([
      { hash: original.txHash, status: 'dropped' },
      { hash: replacement.txHash, status: 'mined' },
    ]);
    expect((await gateway.unspentOutputs([recipient])).map((output) => output.amount)).toEqual([70_000n]);

    const history = await withdrawalHistory(infrastructure.store, orgId, id);
    expect(history.map((entry) => entry.type)).toEqual(['WithdrawalRequested', 'WithdrawalTransactionSigned', 'WithdrawalBroadcast', 'WithdrawalTransactionReplaced', 'WithdrawalCompleted']);
    expect(history[3]).toMatchObject({
      data: { txHash: replacement.txHash, replacedTxHash: original.txHash, fee: replacement.fee, replacedFee: original.fee },
      state: { status: 'Processing', txnHash: replacement.txHash },
    });
  });

  it('a crash between recording the replacement and sending it: the restart sends that replacement, not a third transaction', async () => {
    const { before, recipient, id, original } = await stuckWithdrawal(60_000n);
    await mine(DEFAULT_REPLACE_AFTER_BLOCKS);
    const crash = (type: string) => {
      if (type === 'WithdrawalTransactionReplaced') throw new Error('crash');
    };
    await expect(advanceWithdrawal(processing({ faults: { afterRecord: crash } }), id)).rejects.toThrow('crash');
    const recorded = (await withdrawal(id)).signedTransaction!;
    expect(recorded.txHash).not.toBe(original.txHash);
    const gateway = devnet.gateway(BITCOIN);
    expect(await gateway.transactionStatus(recorded.txHash)).toEqual({ status: 'not_found' }); // never sent
    expect(await gateway.transactionStatus(original.txHash)).toEqual({ status: 'pending' });

    const worker = processor(); // the restart
    await worker.runPass();
    expect(await gateway.transactionStatus(recorded.txHash)).toEqual({ status: 'pending' });
    expect(await gateway.transactionStatus(original.txHash)).toEqual({ status: 'not_found' });
    await mine(bitcoin.properties.confirmations);
    await worker.runPass();
    expect(await withdrawal(id)).toMatchObject({ status: 'Completed', txnHash: recorded.txHash, fee: recorded.fee, replacedTransactions: [{ txHash: original.txHash }] });
    expect((await paymentsTo(recipient)).map(({ hash }) => hash)).toEqual([original.txHash, recorded.txHash]);
    expect(await ledger()).toMatchObject({ available: before.available - 60_000n - BigInt(recorded.fee), held: before.held });
  });

  it('the original confirming before its replacement is sent (a race) completes the withdrawal with the original, paid once', async () => {
    const { before, recipient, id, original } = await stuckWithdrawal(50_000n);
    // CHAINS_CONFIG's fees.replaceAfterBlocks shortens the wait
    await mine(3);
    const crash = (type: string) => {
      if (type === 'WithdrawalTransactionReplaced') throw new Error('crash');
    };
    await expect(advanceWithdrawal(processing({ replaceAfterBlocks: 3, faults: { afterRecord: crash } }), id)).rejects.toThrow('crash');
    const recorded = (await withdrawal(id)).signedTransaction!;
    expect(recorded.txHash).not.toBe(original.txHash);

    devnet.controls(BITCOIN).setMinimumMinedFeeRate(null); // the fee market falls back: the original is mined
    await mine(bitcoin.properties.confirmations);
    await processor({ replaceAfterBlocks: 3 }).runPass();
    expect(await withdrawal(id)).toMatchObject({ status: 'Completed', txnHash: original.txHash, fee: original.fee });
    expect(await ledger()).toMatchObject({ available: before.available - 50_000n - BigInt(original.fee), held: before.held });
    expect((await paymentsTo(recipient)).map(({ hash, status }) => ({ hash, status }))).toEqual([{ hash: original.txHash, status: 'mined' }]);
    expect(await devnet.gateway(BITCOIN).transactionStatus(recorded.txHash)).toEqual({ status: 'not_found' });
  });
});
