import type { Kysely } from 'kysely';
import type { OrganizationWallets } from '../../application/organization-wallets.js';
import type { WithdrawalProcessingServices } from './advance.js';
import type { GasBufferPolicy } from './services.js';
import type { Database } from '../../db/database.js';
import type { PoolTarget } from '../../db/pool.js';
import type { EventStore } from '../../eventstore/port.js';
import type { Logger } from '../../log.js';
import type { StuckTransactions } from '../../chains/transfers/stuck.js';
import type { ChainDefinition } from '../../catalog/chain.js';
import type { BitcoinFeePolicy, ChainsConfig, EvmFeePolicy, TronFeePolicy } from '../../chains/config.js';
import { gweiToWei } from '../../chains/evm/fees.js';
import type { GatewayLookup } from '../../chains/gateway-lookup.js';
import type { Signer } from '../../chains/signer/signer.js';
import { SendingWalletLocks } from '../sending-wallets.js';
import { WithdrawalProcessor, type WithdrawalProcessorOptions } from './worker.js';
import { readyWithdrawalEvents } from './open-withdrawals.js';

export { WithdrawalProcessor, type ProcessorPassResult, type WithdrawalProcessorOptions } from './worker.js';

export interface WithdrawalProcessorDependencies {
  chains: readonly ChainDefinition[];
  gateways: GatewayLookup;
  /** null: no signer (production without a mnemonic), so no processor */
  signer: Signer | null;
  wallets: OrganizationWallets | null;
  store: EventStore;
  clock: () => Date;
  db: Kysely<Database>;
  database: PoolTarget;
  logger: Logger;
  /** where transactions without an outcome for too long are reported */
  stuck?: StuckTransactions;
  options?: Omit<WithdrawalProcessorOptions, 'services' | 'database' | 'events'>;
  /** CHAINS_CONFIG: a Bitcoin or EVM chain's `fees.replaceAfterBlocks` sets its replacement rule (replacement.ts); an EVM chain's `fees.maxFeePerGasGwei` bounds a replacement */
  chainsConfig?: ChainsConfig | null;
}

/** A Bitcoin or EVM chain's `fees.replaceAfterBlocks`, if CHAINS_CONFIG sets one (its schema checks it is a whole number of blocks). */
export const replaceAfterBlocksOf = (chainsConfig: ChainsConfig | null | undefined, chain: ChainDefinition): number | undefined => {
  if (chain.family !== 'bitcoin' && chain.family !== 'evm') return undefined;
  const fees = chainsConfig?.chains.get(chain.id)?.fees as BitcoinFeePolicy | EvmFeePolicy | undefined;
  return fees?.replaceAfterBlocks;
};

/** An EVM chain's fee cap (`fees.maxFeePerGasGwei`) in wei, if CHAINS_CONFIG sets one: no replacement offers more. */
export const maxFeePerGasOf = (chainsConfig: ChainsConfig | null | undefined, chain: ChainDefinition): bigint | undefined => {
  if (chain.family !== 'evm') return undefined;
  const cap = (chainsConfig?.chains.get(chain.id)?.fees as EvmFeePolicy | undefined)?.maxFeePerGasGwei;
  return cap === undefined ? undefined : gweiToWei(cap);
};

/** a top-up of the gas buffer pays for this many withdrawals unless CHAINS_CONFIG says otherwise: more than a burst of 100 queued at once */
export const DEFAULT_GAS_BUFFER_PAYMENTS = 200;

/**
 * EVM, Tron: the settlement wallets' gas buffer, from the chain's `fees.gasBufferPayments` and
 * `fees.gasBufferLowWaterPayments` (default 200, and a quarter of it); none when it is 0 (each
 * withdrawal then gets a top-up of exactly its fee) and on Bitcoin and XRP (the organization's
 * coins pay their fees).
 */
export const gasBufferOf = (chainsConfig: ChainsConfig | null | undefined, chain: ChainDefinition): GasBufferPolicy | undefined => {
  if (chain.family !== 'evm' && chain.family !== 'tron') return undefined;
  const fees = chainsConfig?.chains.get(chain.id)?.fees as EvmFeePolicy | TronFeePolicy | undefined;
  const payments = fees?.gasBufferPayments ?? DEFAULT_GAS_BUFFER_PAYMENTS;
  if (payments === 0) return undefined;
  return { payments, lowWaterPayments: Math.min(fees?.gasBufferLowWaterPayments ?? Math.floor(payments / 4), payments) };
};

/** One withdrawal processor per running chain that has a gateway; they share one reader of the ready withdrawal events and the sending wallets' lock sessions. */
export const createWithdrawalProcessors = ({ chains, gateways, signer, wallets, store, clock, db, database, logger, stuck, options = {}, chainsConfig }: WithdrawalProcessorDependencies) => {
  const processors: WithdrawalProcessor[] = [];
  const sendingWallets = new SendingWalletLocks(database);
  const events = readyWithdrawalEvents(store);
  for (const chain of chains) {
    const gateway = gateways(chain.id);
    if (!signer || !wallets || !gateway) continue;
    const replaceAfterBlocks = replaceAfterBlocksOf(chainsConfig, chain);
    const maxFeePerGas = maxFeePerGasOf(chainsConfig, chain);
    const gasBuffer = gasBufferOf(chainsConfig, chain);
    const services: WithdrawalProcessingServices = {
      chain,
      gateway,
      signer,
      wallets,
      store,
      clock,
      db,
      logger,
      sendingWallets,
      ...(stuck ? { stuck } : {}),
      ...(replaceAfterBlocks === undefined ? {} : { replaceAfterBlocks }),
      ...(maxFeePerGas === undefined ? {} : { maxFeePerGas }),
      ...(gasBuffer === undefined ? {} : { gasBuffer }),
    };
    // aligned passes: the processors' follows of the shared reader meet in one read a poll
    processors.push(new WithdrawalProcessor({ alignPasses: true, ...options, services, database, events }));
  }
  return {
    processors,
    start: () => processors.forEach((processor) => processor.start()),
    stop: async () => {
      await Promise.all(processors.map((processor) => processor.stop()));
      await events.idle();
      await sendingWallets.close();
    },
  };
};
