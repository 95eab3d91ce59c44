import ecc from '@bitcoinerlab/secp256k1';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadAggregate } from '../../src/application/command-handler.js';
import { getOrCreateDepositAccount } from '../../src/application/deposit-accounts.js';
import { confirmDeposit, recordDeposit } from '../../src/application/deposits.js';
import { createOrganizationWallets, type OrganizationWallets } from '../../src/application/organization-wallets.js';
import { bootstrapOrganization } from '../../src/application/organizations.js';
import type { WithdrawalProcessingServices } from '../../src/processes/withdrawal-processor/advance.js';
import { createWithdrawal, type WithdrawalServices } from '../../src/application/withdrawals.js';
import { createDepositAddressBook } from '../../src/chains/address-book.js';
import { chainAvailability } from '../../src/chains/chain-availability.js';
import { createDevnet, type Devnet } from '../../src/chains/devnet/index.js';
import { addressCodecs } from '../../src/chains/families.js';
import { WithdrawalProcessor } from '../../src/processes/withdrawal-processor/index.js';
import { SendingWalletLocks } from '../../src/processes/sending-wallets.js';
import { findChain } from '../../src/catalog/registry.js';
import { loadConfig } from '../../src/config/env.js';
import { ledgerDecider } from '../../src/domain/ledger/decide.js';
import { streams } from '../../src/domain/streams.js';
import { withdrawalDecider } from '../../src/domain/withdrawal/decide.js';
import { connectInfrastructure, type Infrastructure } from '../../src/infrastructure.js';
import { createLogger } from '../../src/log.js';
import { allProjections } from '../../src/projections/registry.js';
import { ProjectionRunner } from '../../src/projections/runner.js';
import { createTestDatabase } from './database.js';

/** an hour: the devnet makes no block of its own during a test, blocks are mined only by the test */
const DEVNET_BLOCK_TIME_MS = 3_600_000;
const meta = { actor: 'test' };

export interface ChainWorkerFixtureOptions {
  /** what every part reads the time from; a test that moves time passes its own, the others get one fixed instant */
  clock?: () => Date;
  /**
   * which read models are kept: 'none'; 'running' (every projection started); 'caught-up' (every
   * projection caught up before it starts, and again once the organization is bootstrapped)
   */
  projections: 'none' | 'running' | 'caught-up';
  /** what withdrawal references start with; default 'ref' */
  referencePrefix?: string;
}

/** A withdrawal to create; the reference is the fixture's. */
export interface WithdrawalToCreate {
  chainId: string;
  tokenId: string;
  amount: bigint;
  recipient: string;
  memo?: string | undefined;
}

/** An address nobody in the test holds the key of, on the chain. */
export const externalAddress = (chainId: string) => {
  const chain = findChain(chainId)!;
  let publicKey: Uint8Array | null = null;
  while (!publicKey) publicKey = ecc.pointFromScalar(randomBytes(32), true);
  return addressCodecs[chain.family].addressFromPublicKey(publicKey, chain.network);
};

/**
 * The parts the chain workers (withdrawal processor, sweeper) run on, without the service around
 * them: a test database and data directory, the devnet, the organization wallets, the projections
 * asked for, and one bootstrapped organization ('Acme', user 'alice'). `stop()` drops all of it.
 */
export const startChainWorkerFixture = async (label: string, options: ChainWorkerFixtureOptions) => {
  const fixedNow = new Date('2026-11-22T10:00:00.000Z');
  const clock = options.clock ?? (() => fixedNow);
  const logger = createLogger(process.env.TEST_LOG_LEVEL === 'debug' ? 'debug' : 'silent');
  const database = await createTestDatabase(label);
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), `ledgergate-${label}-`));
  const config = loadConfig({ DATA_DIR: dataDir, LEDGERGATE_SECRET_KEY: randomBytes(32).toString('base64'), LOG_LEVEL: 'silent', DEVNET_BLOCK_TIME_MS: String(DEVNET_BLOCK_TIME_MS) });
  const infrastructure: Infrastructure = await connectInfrastructure(database.config, config, logger, 'test', async () => {
    await database.drop();
    await fs.rm(dataDir, { recursive: true, force: true });
  });
  const runners =
    options.projections === 'none' ? [] : allProjections().map((projection) => new ProjectionRunner({ projection, store: infrastructure.store, database: infrastructure.databaseTarget, logger }));
  const sendingWallets = new SendingWalletLocks(infrastructure.databaseTarget);
  const stop = async () => {
    await Promise.all(runners.map((runner) => runner.stop()));
    await sendingWallets.close();
    await infrastructure.close();
  };

  try {
    const devnet: Devnet = createDevnet({ db: infrastructure.db, clock, blockTimeMs: DEVNET_BLOCK_TIME_MS, logger });
    const wallets: OrganizationWallets = createOrganizationWallets({ store: infrastructure.store, clock, signer: infrastructure.signer! });
    const catchUp = async () => {
      if (options.projections === 'caught-up') for (const runner of runners) await runner.catchUp();
    };
    await catchUp();
    runners.forEach((runner) => runner.start());
    const organizationServices = { store: infrastructure.store, db: infrastructure.db, keyring: infrastructure.keyring, clock, isProduction: false };
    const bootstrapped = await bootstrapOrganization(organizationServices, { name: 'Acme', usernames: ['alice'] }, meta);
    await catchUp();
    const orgId = bootstrapped.organization.id;
    const userId = bootstrapped.users[0]!.id;
    let users = 0;
    let references = 0;

    /** what a withdrawal processor or a sweeper on the chain runs with */
    const workerServices = (chainId: string, overrides: Partial<WithdrawalProcessingServices> = {}): WithdrawalProcessingServices => ({
      chain: findChain(chainId)!,
      gateway: devnet.gateway(chainId),
      signer: infrastructure.signer!,
      wallets,
      store: infrastructure.store,
      clock,
      db: infrastructure.db,
      logger,
      sendingWallets,
      ...overrides,
    });
    const withdrawalServices = (overrides: Partial<WithdrawalServices> = {}): WithdrawalServices => ({
      ...organizationServices,
      availability: chainAvailability({ isProduction: false }),
      gateways: (chainId) => devnet.gateway(chainId),
      wallets,
      ...overrides,
    });
    const mineConfirmations = (chainId: string) => devnet.controls(chainId).mine(findChain(chainId)!.properties.confirmations);

    return {
      infrastructure,
      devnet,
      wallets,
      runners,
      orgId,
      userId,
      clock,
      logger,
      workerServices,
      withdrawalServices,
      mineConfirmations,
      /** a processor that retries at once and polls often */
      withdrawalProcessor: (chainId: string, overrides: Partial<WithdrawalProcessingServices> = {}) =>
        new WithdrawalProcessor({ services: workerServices(chainId, overrides), database: infrastructure.databaseTarget, failureDelayMs: () => 0, pollMs: 50 }),
      /** alice asks for the withdrawal, under the next reference */
      withdraw: (withdrawal: WithdrawalToCreate, overrides: Partial<WithdrawalServices> = {}) => {
        const { chainId, tokenId, amount, recipient, memo } = withdrawal;
        const request = { chainId, tokenId, amount: amount.toString(), recipient, reference: `${options.referencePrefix ?? 'ref'}-${++references}`, ...(memo ? { memo } : {}) };
        return createWithdrawal(withdrawalServices(overrides), { orgId, userId }, request, meta);
      },
      /**
       * A new user's deposit account on the chain (or `externalUserId`'s) and a transfer to it on
       * the devnet, recorded and confirmed: the organization's ledger credited. The confirmations are
       * mined first unless `mineConfirmations` is false (then the transfer's block stays the chain's tip).
       */
      credit: async (chainId: string, asset: string, amount: bigint, creditOptions: { mineConfirmations?: boolean; externalUserId?: string } = {}) => {
        const externalUserId = creditOptions.externalUserId ?? `user-${++users}`;
        const addresses = createDepositAddressBook(infrastructure.signer!);
        const { account } = await getOrCreateDepositAccount({ store: infrastructure.store, clock, addresses }, { orgId, chainId, externalUserId }, meta);
        const address = account.properties.address;
        const destinationTag = 'destinationTag' in account.properties ? Number(account.properties.destinationTag) : null;
        const { txHash, blockNumber } = await devnet.controls(chainId).deposit({ toAddress: address, asset, amount, destinationTag });
        const [transfer] = (await devnet.gateway(chainId).transfersInBlock(blockNumber, new Set([address]))).filter((found) => found.txHash === txHash);
        const depositServices = { store: infrastructure.store, clock };
        await recordDeposit(depositServices, { ...transfer!, chainId }, { orgId, externalUserId, accountChainId: chainId }, meta);
        const ref = { chainId, txHash: transfer!.txHash, index: transfer!.index };
        if (creditOptions.mineConfirmations !== false) await mineConfirmations(chainId);
        await confirmDeposit(depositServices, ref, findChain(chainId)!.properties.confirmations, meta);
        return { ref, address, externalUserId };
      },
      /** the organization's ledger of the token, as its events leave it */
      ledger: async (tokenId: string) => (await loadAggregate(infrastructure.store, streams.ledger(orgId, tokenId), ledgerDecider)).state,
      /** the withdrawal as its events leave it ('None' if it has none) */
      withdrawal: async (id: string) => (await loadAggregate(infrastructure.store, streams.withdrawal(id), withdrawalDecider)).state,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
};

export type ChainWorkerFixture = Awaited<ReturnType<typeof startChainWorkerFixture>>;
