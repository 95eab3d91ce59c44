import type { ChainDefinition } from '../catalog/chain.js';
import type { ChainsConfig } from './config.js';
import { findChain } from '../catalog/registry.js';

/** Which chains the chain layer runs, service-wide: a chain that does not run is enabled for nobody. */
export interface ChainAvailability {
  isChainRunning(chainId: string): boolean;
  /**
   * The chain as the service runs it: the registry's definition with CHAINS_CONFIG's confirmations.
   * Watchers, sweepers, processors and GET /chains all take confirmations from here. Absent: the registry's.
   */
  definitionOf?(chain: ChainDefinition): ChainDefinition;
}

/** Where a chain's blocks come from: its configured nodes, the built-in devnet, or nowhere. */
export type ChainBackend = 'node' | 'devnet' | 'none';

/**
 * CONTRACT §8 and CHAINS_CONFIG: a chain with a config entry runs on its nodes when `enabled` (and
 * not at all when switched off there); one without runs on the devnet outside production and not
 * at all in production.
 */
export const chainBackend = (config: { isProduction: boolean; chains?: ChainsConfig | null }, chainId: string): ChainBackend => {
  if (!findChain(chainId)) return 'none';
  const settings = config.chains?.chains.get(chainId);
  if (settings) return settings.enabled ? 'node' : 'none';
  return config.isProduction ? 'none' : 'devnet';
};

/** The effective confirmations: the configured ones of a chain on its nodes, else the registry's. */
const effectiveDefinition = (config: { chains?: ChainsConfig | null }, chain: ChainDefinition): ChainDefinition => {
  const confirmations = config.chains?.chains.get(chain.id)?.confirmations;
  return confirmations === undefined ? chain : { ...chain, properties: { ...chain.properties, confirmations } };
};

/** Decided once from configuration. */
export const chainAvailability = (config: { isProduction: boolean; chains?: ChainsConfig | null }): Required<ChainAvailability> => ({
  isChainRunning: (chainId) => chainBackend(config, chainId) !== 'none',
  definitionOf: (chain) => effectiveDefinition(config, chain),
});
