import type { Kysely } from 'kysely';
import type { OrganizationWallets } from '../../application/organization-wallets.js';
import type { WithdrawalProcessingServices } from '../../application/withdrawal-processing.js';
import type { Database } from '../../db/database.js';
import type { PoolTarget } from '../../db/pool.js';
import type { EventStore } from '../../eventstore/port.js';
import type { Logger } from '../../log.js';
import type { ChainDefinition } from '../chain.js';
import type { GatewayLookup } from '../gateway-lookup.js';
import type { Signer } from '../signer/signer.js';
import { WithdrawalProcessor, type WithdrawalProcessorOptions } from './worker.js';

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
  options?: Omit<WithdrawalProcessorOptions, 'services' | 'database'>;
}

/** One withdrawal processor per running chain that has a gateway. */
export const createWithdrawalProcessors = ({ chains, gateways, signer, wallets, store, clock, db, database, logger, options = {} }: WithdrawalProcessorDependencies) => {
  const processors: WithdrawalProcessor[] = [];
  for (const chain of chains) {
    const gateway = gateways(chain.id);
    if (!signer || !wallets || !gateway) continue;
    const services: WithdrawalProcessingServices = { chain, gateway, signer, wallets, store, clock, db, logger };
    processors.push(new WithdrawalProcessor({ ...options, services, database }));
  }
  return {
    processors,
    start: () => processors.forEach((processor) => processor.start()),
    stop: async () => {
      await Promise.all(processors.map((processor) => processor.stop()));
    },
  };
};
