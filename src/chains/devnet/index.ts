import type { Kysely } from 'kysely';
import type { Database } from '../../db/database.js';
import type { Logger } from '../../log.js';
import type { ChainGateway } from '../gateway.js';
import { CHAINS, findChain } from '../../catalog/registry.js';
import { withLockedChains } from './chain-state.js';
import { createDevnetControls, type DevnetControls, type DevnetDeposit } from './controls.js';
import { createDevnetGateway } from './gateway.js';
import { startBlockProducer, type BlockProducer } from './producer.js';
import { devnetDb } from './tables.js';

export { createDevnetControls, DepositRefusedError, MAX_BLOCKS_PER_REQUEST, type DevnetControls, type DevnetDeposit, type DevnetFault } from './controls.js';
export { createDevnetGateway } from './gateway.js';
export { DEVNET_FAUCET_MNEMONIC, faucetKey } from './faucet-keys.js';
export { estimateTransferFee } from './fees.js';
export { MAX_REORG_DEPTH } from './mining.js';
export { DEVNET_HEAD_CHANNEL } from './chain-state.js';
export { devnetDb, type DevnetDatabase, type DevnetDb } from './tables.js';

export interface Devnet {
  gateway(chainId: string): ChainGateway;
  controls(chainId: string): DevnetControls;
  /**
   * Deposits on any chains, all or none (CONTRACT §8's batch): each chain's in its next block, one
   * transaction for all. Answers in the order given; a refused one throws DepositRefusedError with
   * its index, and nothing is mined.
   */
  depositAll(deposits: readonly { chainId: string; deposit: DevnetDeposit }[]): Promise<{ txHash: string; blockNumber: number }[]>;
  /** starts mining a block every blockTimeMs on every chain */
  startProducer(): void;
  stopProducer(): Promise<void>;
}

/**
 * The in-process devnet of every supported chain (CONTRACT §8), over the service's database: one
 * gateway and one set of controls per chain, and the block producer the service starts outside
 * production.
 */
export const createDevnet = (options: { db: Kysely<Database>; clock: () => Date; blockTimeMs: number; logger: Logger }): Devnet => {
  const deps = { db: devnetDb(options.db), clock: options.clock };
  const gateways = new Map(CHAINS.map((chain) => [chain.id, createDevnetGateway(chain, deps)]));
  const controls = new Map(CHAINS.map((chain) => [chain.id, createDevnetControls(chain, deps)]));
  const known = <T>(map: Map<string, T>, chainId: string): T => {
    const found = map.get(chainId);
    if (!found || !findChain(chainId)) throw new Error(`no devnet for chain ${chainId}`);
    return found;
  };
  let producer: BlockProducer | null = null;
  return {
    gateway: (chainId) => known(gateways, chainId),
    controls: (chainId) => known(controls, chainId),
    depositAll: async (deposits) => {
      const byChain = new Map<string, { index: number; deposit: DevnetDeposit }[]>();
      deposits.forEach(({ chainId, deposit }, index) => {
        known(controls, chainId);
        const batch = byChain.get(chainId) ?? [];
        batch.push({ index, deposit });
        byChain.set(chainId, batch);
      });
      const chains = [...byChain.keys()].map((chainId) => known(controls, chainId).chain);
      const made = await withLockedChains(deps.db, chains, async (trx, states) => {
        const results = [];
        for (const [chainId, batch] of byChain) results.push(...(await known(controls, chainId).depositAllLocked(trx, states.get(chainId)!, batch)));
        return results;
      });
      return made.sort((a, b) => a.index - b.index).map(({ txHash, blockNumber }) => ({ txHash, blockNumber }));
    },
    startProducer: () => {
      producer ??= startBlockProducer({ chains: [...controls.values()], db: deps.db, clock: options.clock, blockTimeMs: options.blockTimeMs, logger: options.logger });
    },
    stopProducer: async () => {
      await producer?.stop();
      producer = null;
    },
  };
};
