import { findChain } from './registry.js';

/** Which chains the chain layer runs, service-wide: a chain that does not run is enabled for nobody. */
export interface ChainAvailability {
  isChainRunning(chainId: string): boolean;
}

/**
 * Decided once from configuration. Outside production every supported chain runs on the built-in
 * devnet (CONTRACT §8). Production has no devnet, and real networks need chain configuration
 * (CHAINS_CONFIG) that is not read yet: until it is, no chain runs there.
 */
export const chainAvailability = (config: { isProduction: boolean }): ChainAvailability => ({
  isChainRunning: (chainId) => !config.isProduction && findChain(chainId) !== undefined,
});
