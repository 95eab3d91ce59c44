import type { Kysely } from 'kysely';
import type { OrganizationWallets } from '../../application/organization-wallets.js';
import type { SweepServices } from './advance.js';
import type { Database } from '../../db/database.js';
import type { PoolTarget } from '../../db/pool.js';
import type { EventStore } from '../../eventstore/port.js';
import type { Logger } from '../../log.js';
import type { StuckTransactions } from '../../chains/transfers/stuck.js';
import type { ChainDefinition } from '../../catalog/chain.js';
import type { GatewayLookup } from '../../chains/gateway-lookup.js';
import type { Signer } from '../../chains/signer/signer.js';
import { isSweptChain } from '../../projections/sweep-queue.js';
import { SendingWalletLocks } from '../sending-wallets.js';
import { Sweeper, type SweeperOptions } from './worker.js';

export { Sweeper, type PassResult, type SweeperOptions } from './worker.js';
export { signSweepTransfer } from '../../chains/transfers/transactions.js';

export interface SweeperDependencies {
  chains: readonly ChainDefinition[];
  gateways: GatewayLookup;
  /** null: no signer (production without a mnemonic), so no sweeper */
  signer: Signer | null;
  wallets: OrganizationWallets;
  store: EventStore;
  clock: () => Date;
  db: Kysely<Database>;
  database: PoolTarget;
  logger: Logger;
  /** where transactions without an outcome for too long are reported */
  stuck?: StuckTransactions;
  options?: Omit<SweeperOptions, 'services' | 'database'>;
}

/** One sweeper per running EVM and Tron chain that has a gateway; they share the sending wallets' lock sessions. */
export const createSweepers = ({ chains, gateways, signer, wallets, store, clock, db, database, logger, stuck, options = {} }: SweeperDependencies) => {
  const sweepers: Sweeper[] = [];
  const sendingWallets = new SendingWalletLocks(database);
  for (const chain of chains) {
    const gateway = gateways(chain.id);
    if (!signer || !gateway || !isSweptChain(chain.id)) continue;
    const services: SweepServices = { chain, gateway, signer, wallets, store, clock, db, logger, sendingWallets, ...(stuck ? { stuck } : {}) };
    sweepers.push(new Sweeper({ ...options, services, database }));
  }
  return {
    sweepers,
    start: () => sweepers.forEach((sweeper) => sweeper.start()),
    stop: async () => {
      await Promise.all(sweepers.map((sweeper) => sweeper.stop()));
      await sendingWallets.close();
    },
  };
};
