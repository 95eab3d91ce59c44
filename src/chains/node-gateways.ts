import type { Logger } from '../log.js';
import type { ChainDefinition, ChainFamily } from './chain.js';
import { ChainsConfigError, nodeSettingsOf, type ChainSettings, type ChainsConfig } from './config.js';
import { createEvmGateway, evmRpcFor } from './evm/gateway.js';
import type { ChainGateway } from './gateway.js';
import { bitcoinTronXrpGatewayFactories } from './other-node-gateways.js';

export type NodeGateway = ChainGateway & { close?(): void };
export type NodeGatewayFactory = (chain: ChainDefinition, settings: ChainSettings, logger: Logger) => NodeGateway;

/**
 * Every family runs on real nodes: EVM over JSON-RPC, Bitcoin over Esplora, Tron over java-tron HTTP,
 * XRP over rippled JSON-RPC; all behind one failover (src/chains/rpc/failover.ts).
 */
export const nodeGatewayFactories: Partial<Record<ChainFamily, NodeGatewayFactory>> = {
  evm: (chain, settings, logger) => createEvmGateway(chain, settings, evmRpcFor(chain, settings, logger)),
  ...bitcoinTronXrpGatewayFactories(),
};

/**
 * One gateway per chain that CHAINS_CONFIG enables, over its (effective) definition: a gateway's
 * `chain` carries the confirmations the watchers follow.
 */
export const createNodeGateways = (chains: readonly ChainDefinition[], config: ChainsConfig | null | undefined, logger: Logger): Map<string, NodeGateway> => {
  const gateways = new Map<string, NodeGateway>();
  for (const chain of chains) {
    const settings = nodeSettingsOf(config, chain.id);
    if (!settings) continue;
    const factory = nodeGatewayFactories[chain.family];
    if (!factory) throw new ChainsConfigError([`chains.${chain.id}: this build has no node gateway for the ${chain.family} family`]);
    gateways.set(chain.id, factory(chain, settings, logger.child({ chainId: chain.id })));
  }
  return gateways;
};
