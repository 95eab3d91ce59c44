import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { createApp, createOperationsApp } from './api/app.js';
import { createDevnet, DEVNET_HEAD_CHANNEL } from './chains/devnet/index.js';
import { createOrganizationWallets, organizationWalletAddresses, organizationWalletSpace } from './application/organization-wallets.js';
import type { GatewayLookup } from './chains/gateway-lookup.js';
import { createSweepers } from './processes/sweeper/index.js';
import { DEFAULT_STUCK_AFTER_MS, StuckTransactions } from './chains/transfers/stuck.js';
import { createWithdrawalProcessors } from './processes/withdrawal-processor/index.js';
import type { DepositAccountServices } from './application/deposit-accounts.js';
import type { OrganizationServices } from './application/organizations.js';
import { createOrganizationStates } from './application/organization-states.js';
import { sharedBalanceReads } from './application/shared-balance-reads.js';
import { createDepositAddressBook } from './chains/address-book.js';
import { chainAvailability, chainBackend } from './chains/chain-availability.js';
import { checkConfiguredKeys } from './chains/config.js';
import { createNodeGateways } from './chains/node-gateways.js';
import { bitcoinOwnOutputs } from './application/bitcoin-own-outputs.js';
import { CHAINS } from './catalog/registry.js';
import { createChainWatchers, watcherPollIntervalMs } from './processes/deposit-watcher/index.js';
import { serviceParts, type Config } from './config/env.js';
import { openInfrastructure, type Infrastructure } from './infrastructure.js';
import type { Logger } from './log.js';
import { allProjections } from './projections/registry.js';
import { ProjectionRunner } from './projections/runner.js';
import { SharedProjectionReads } from './projections/shared-reads.js';
import { WebhookDispatcher } from './webhooks/dispatcher.js';
import { observeService } from './observability/metrics.js';
import { operationsFigures } from './projections/operations-figures.js';
import { createReadiness } from './projections/readiness.js';
import { logStartSummary } from './config/start-summary.js';

export interface RunningService {
  url: string;
  infrastructure: Infrastructure;
  /** stop taking requests, finish in-flight work, checkpoint, stop the embedded database */
  stop(): Promise<void>;
}

/** A stop asked for while the service was starting: what had started is stopped again. */
export class StoppedDuringStartError extends Error {
  constructor() {
    super('stopped while starting');
  }
}

const throwIfStopping = (stopSignal: AbortSignal | undefined) => {
  if (stopSignal?.aborted) throw new StoppedDuringStartError();
};

const listen = (app: { fetch: ReturnType<typeof createApp>['fetch'] }, config: Config): Promise<ServerType> =>
  new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port: config.PORT, hostname: config.HOST }, () => resolve(server));
    server.once('error', reject);
  });

const closeServer = (server: ServerType, timeoutMs: number): Promise<void> =>
  new Promise((resolve) => {
    const force = setTimeout(() => {
      if ('closeAllConnections' in server) server.closeAllConnections();
    }, timeoutMs);
    server.close(() => {
      clearTimeout(force);
      resolve();
    });
    if ('closeIdleConnections' in server) server.closeIdleConnections();
  });

/** Production without LEDGERGATE_SIGNER_MNEMONIC: no chain runs, and nothing can derive an address. */
const signerMissing = {
  accountXpub: (): never => {
    throw new Error('no signer: LEDGERGATE_SIGNER_MNEMONIC is not set');
  },
};

/**
 * The parts of the service over given infrastructure: the app, the projection runners and the
 * workers. Tests compose it over a test database; startService over the configured one.
 * `config.SERVE_ROLE` says which of them this process runs: `api` answers the whole API and starts
 * no background work (the devnet's endpoints included: its chains are in the database); `workers`
 * runs every projection, the webhook dispatcher, the devnet's block producer, the deposit
 * watchers, sweepers and withdrawal processors, and answers only /healthz, /readyz and /metrics;
 * a list of parts (`projections`, `webhooks,chains`) runs those alone, answering the same three
 * paths unless `api` is among them.
 */
export const composeService = (infrastructure: Infrastructure, config: Config, logger: Logger, clock: () => Date = () => new Date()) => {
  const services: OrganizationServices = {
    store: infrastructure.store,
    organizationStates: createOrganizationStates(infrastructure.store),
    db: infrastructure.db,
    keyring: infrastructure.keyring,
    clock,
    isProduction: config.isProduction,
  };
  const depositAccounts: DepositAccountServices = {
    store: infrastructure.store,
    clock,
    addresses: createDepositAddressBook(infrastructure.signer ?? signerMissing),
  };
  // background work reads on pools of its own (Infrastructure.roles): requests never queue behind it
  const { readSide, workers } = infrastructure.roles;
  const projections = allProjections();
  // one read of the store for every projection: an append wakes one read, not one per projection
  const projectionReads = new SharedProjectionReads(readSide.store, projections.map(({ filter }) => filter));
  const runners = projections.map((projection) => new ProjectionRunner({ projection, store: readSide.store, reads: projectionReads, database: infrastructure.databaseTarget, logger }));
  const dispatcher = new WebhookDispatcher({
    db: readSide.db,
    listen: infrastructure.databaseTarget,
    encryptionKey: infrastructure.keyring.encryptionKey,
    refuseInternalAddresses: config.isProduction,
    retryDelaysMs: config.WEBHOOK_RETRY_DELAYS_MS,
    logger,
  });
  // CONTRACT §8: outside production every chain runs on the devnet (its endpoints, its block producer)
  const devnet = config.isProduction ? null : createDevnet({ db: workers.db, clock, blockTimeMs: config.DEVNET_BLOCK_TIME_MS, logger });
  // CHAINS_CONFIG: configured chains run on their nodes (the signer must hold their keys), the rest on the devnet outside production
  checkConfiguredKeys(config.chains, infrastructure.signer);
  const availability = chainAvailability(config);
  const runningChains = CHAINS.filter((chain) => availability.isChainRunning(chain.id)).map((chain) => availability.definitionOf(chain));
  // Bitcoin over Core's RPC keeps no address index: the service's own outputs come from its history
  const nodeGateways = createNodeGateways(runningChains, config.chains, logger, { bitcoinOwnOutputs: bitcoinOwnOutputs(workers.db) });
  /** the gateway of a running chain (its nodes', or the devnet's), shared by the API and the workers */
  const gateways: GatewayLookup = (chainId) =>
    nodeGateways.get(chainId) ?? (devnet && chainBackend(config, chainId) === 'devnet' ? devnet.gateway(chainId) : undefined);
  // deposits in: one watcher per running chain over its gateway
  const watchers = createChainWatchers({
    gateways: runningChains.flatMap((chain) => gateways(chain.id) ?? []),
    services: { store: workers.store, clock },
    db: workers.db,
    database: infrastructure.databaseTarget,
    logger,
    pollIntervalMs: watcherPollIntervalMs(config.DEVNET_BLOCK_TIME_MS),
    // the devnet announces every new head: its chains' watchers wait for it instead of polling
    headChannel: devnet ? { channel: DEVNET_HEAD_CHANNEL, chainIds: new Set(runningChains.filter((chain) => chainBackend(config, chain.id) === 'devnet').map((chain) => chain.id)) } : undefined,
    organizationWalletsAt: (chain) => ({
      space: organizationWalletSpace(chain.keySpace),
      addressesAt: (index) => {
        if (!infrastructure.signer) return [];
        const { settlementAddress, gasAddress } = organizationWalletAddresses(infrastructure.signer, chain, index);
        return gasAddress ? [settlementAddress, gasAddress] : [settlementAddress];
      },
    }),
  });
  // sent transactions without an outcome for longer than their chain allows: logged and counted, never released on a guess
  const stuckTransactions = new StuckTransactions(logger, (chainId) => config.chains?.chains.get(chainId)?.stuckAfterMs ?? DEFAULT_STUCK_AFTER_MS, clock);
  const organizationWallets = infrastructure.signer ? createOrganizationWallets({ store: infrastructure.store, clock, signer: infrastructure.signer }) : null;
  // sweeps: confirmed deposits on EVM and Tron chains move to the organization's settlement wallet
  const sweepers = organizationWallets
    ? createSweepers({ chains: runningChains, gateways, signer: infrastructure.signer, wallets: organizationWallets, store: workers.store, clock, db: workers.db, database: infrastructure.databaseTarget, logger, stuck: stuckTransactions })
    : createSweepers({ chains: [], gateways, signer: null, wallets: { walletsOf: () => Promise.reject(new Error('no signer')) }, store: workers.store, clock, db: workers.db, database: infrastructure.databaseTarget, logger });
  // withdrawals out: one processor per running chain signs, records, broadcasts and follows them
  const withdrawalProcessors = createWithdrawalProcessors({
    chains: runningChains,
    gateways,
    signer: infrastructure.signer,
    wallets: organizationWallets,
    store: workers.store,
    clock,
    db: workers.db,
    database: infrastructure.databaseTarget,
    logger,
    stuck: stuckTransactions,
    chainsConfig: config.chains,
  });
  // readiness reads the projections' checkpoints in the database, wherever they run
  const readiness = createReadiness(infrastructure.db, infrastructure.store, projections);
  const role = config.SERVE_ROLE;
  const parts = serviceParts(role);
  const app = parts.has('api')
    ? createApp({
        readiness: readiness.check,
        gasStation: organizationWallets ? { wallets: organizationWallets, gateways } : null,
        // POST /withdrawals checks the gas wallet's balance on every request: concurrent checks share reads
        withdrawals: { gateways: sharedBalanceReads(gateways), wallets: organizationWallets },
        logger,
        health: infrastructure.health,
        services,
        depositAccounts,
        devnet,
        chains: availability,
        rateLimits: { perMinute: config.RATE_LIMIT_PER_MINUTE, loginPerMinute: config.LOGIN_RATE_LIMIT_PER_MINUTE },
      })
    : createOperationsApp({ readiness: readiness.check, logger, health: infrastructure.health });
  // GET /metrics: the figures of the read models, and the stuck transactions this process's workers see
  const stopObserving = observeService({
    ...operationsFigures(infrastructure.db, infrastructure.store, projections),
    stuckTransactions: () => {
      const byChain: Record<string, number> = {};
      for (const { chainId } of stuckTransactions.list()) byChain[chainId] = (byChain[chainId] ?? 0) + 1;
      return byChain;
    },
  });
  return {
    app,
    readiness,
    services,
    depositAccounts,
    devnet,
    watchers,
    gateways,
    organizationWallets,
    sweepers: sweepers.sweepers,
    withdrawalProcessors: withdrawalProcessors.processors,
    /** sent transactions without an outcome for too long (for metrics and operators) */
    stuckTransactions,
    role,
    /** catch the read models up (so the first requests see current data), then follow live: the parts SERVE_ROLE names (an `api` process: nothing) */
    startWorkers: async (stopSignal?: AbortSignal) => {
      if (parts.has('projections')) {
        for (const runner of runners) {
          await runner.catchUp(stopSignal);
          throwIfStopping(stopSignal);
        }
        for (const runner of runners) runner.start();
      }
      if (parts.has('webhooks')) dispatcher.start();
      if (parts.has('chains')) {
        devnet?.startProducer();
        watchers.start();
        sweepers.start();
        withdrawalProcessors.start();
      }
    },
    /** projections first (no new outbox rows), then the sends in flight */
    stopWorkers: async () => {
      if (parts.has('chains')) {
        // the watchers first: they append the events the projections turn into outbox rows
        await watchers.stop();
        await sweepers.stop();
        await withdrawalProcessors.stop();
      }
      if (parts.has('projections')) await Promise.all(runners.map((runner) => runner.stop()));
      if (parts.has('webhooks')) await dispatcher.stop({ graceMs: config.SHUTDOWN_TIMEOUT_MS });
      if (parts.has('chains')) await devnet?.stopProducer();
      for (const gateway of nodeGateways.values()) gateway.close?.();
      stopObserving();
    },
  };
};

/**
 * The service in one process: API, projections and workers, or the part SERVE_ROLE names.
 * `stopSignal` aborted during the start (a SIGTERM while the projections catch up on a long
 * history) ends it between two batches: what started is stopped, the embedded database too, and
 * the start rejects with StoppedDuringStartError.
 */
export const startService = async (config: Config, logger: Logger, stopSignal?: AbortSignal): Promise<RunningService> => {
  const infrastructure = await openInfrastructure(config, logger, 'server');
  let service: ReturnType<typeof composeService>;
  try {
    throwIfStopping(stopSignal);
    service = composeService(infrastructure, config, logger);
  } catch (error) {
    // a refused CHAINS_CONFIG (keys, families): nothing started yet but the database
    await infrastructure.close();
    throw error;
  }
  let server: ServerType | null = null;
  try {
    // listening before the projections caught up: /healthz answers at once, /readyz once they did
    await service.readiness.recordStart();
    server = await listen(service.app, config);
    const address = server.address() as AddressInfo;
    const url = `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`;
    await service.startWorkers(stopSignal);
    throwIfStopping(stopSignal);
    await logStartSummary(logger, config, infrastructure.store, { url, eventStore: infrastructure.eventStoreKind, role: service.role });
    const listening = server;
    return {
      url,
      infrastructure,
      stop: async () => {
        logger.info('shutting down');
        await closeServer(listening, config.SHUTDOWN_TIMEOUT_MS);
        await service.stopWorkers();
        await infrastructure.close();
        logger.info('stopped');
      },
    };
  } catch (error) {
    if (server) await closeServer(server, config.SHUTDOWN_TIMEOUT_MS);
    await service.stopWorkers();
    await infrastructure.close();
    throw error;
  }
};
