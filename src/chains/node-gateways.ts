import type { Logger } from '../log.js';
import type { ChainDefinition, ChainFamily } from '../catalog/chain.js';
import { ChainsConfigError, nodeSettingsOf, type ChainSettings, type ChainsConfig, type BitcoinFeePolicy, type TronFeePolicy, type XrpFeePolicy } from './config.js';
import { createEvmGateway, evmRpcFor } from './evm/gateway.js';
import type { ChainGateway } from './gateway.js';
import { createBitcoinGateway } from './bitcoin/gateway.js';
import { bitcoinCoreAuthorization, createBitcoinCoreGateway, type OwnOutputs } from './bitcoin/core-rpc-gateway.js';
import { createHttpClient, type FetchLike } from './rpc/http.js';
import { createTronGateway } from './tron/gateway.js';
import { createXrpGateway } from './xrp/gateway.js';
import { createXrplRequester, rippledJsonRpc } from './xrp/requester.js';

/**
 * Node gateways of the Bitcoin, Tron and XRP families from a CHAINS_CONFIG entry, in the shape of
 * `nodeGatewayFactories` below. `rpcUrls` are, per family:
 * Esplora base URLs (https://blockstream.info/api, a self-hosted electrs) or, with `kind: "rpc"`,
 * Bitcoin Core JSON-RPC URLs (http://bitcoind:8332), java-tron full-node
 * HTTP URLs (http://node:8090, https://api.trongrid.io), rippled JSON-RPC URLs
 * (http://rippled:51234, https://s1.ripple.com:51234). The first is preferred; timeouts, outages
 * and 5xx move to the next, with backoff (src/chains/rpc/failover.ts).
 */
type Factory = (chain: ChainDefinition, settings: Pick<ChainSettings, 'rpcUrls' | 'rpcTimeoutMs' | 'fees' | 'kind' | 'rpcAuth'>, logger: Logger, sources?: NodeGatewaySources) => ChainGateway;

/** What some gateways take from the service's own history rather than from the node */
export interface NodeGatewaySources {
  /** Bitcoin over Core's RPC (kind rpc): the outputs the service was paid or paid itself */
  bitcoinOwnOutputs?: OwnOutputs;
}

/** the network and the clock, replaced in tests */
export interface NodeTransport {
  fetch?: FetchLike;
  sleep?: (ms: number) => Promise<void>;
}

export const bitcoinTronXrpGatewayFactories = (transport: NodeTransport = {}): Partial<Record<ChainFamily, Factory>> => {
  const httpClient = (endpoints: readonly string[], timeoutMs: number, logger: Logger, maxAttempts?: number, headers?: () => Record<string, string>) =>
    createHttpClient({ endpoints, timeoutMs, logger, ...transport, ...(maxAttempts ? { maxAttempts } : {}), ...(headers ? { headers } : {}) });
  return {
    // each family's `fees` schema is its own (config.ts validated the entry by the chain's family)
    bitcoin: (chain, settings, logger, sources) => {
      const fees = (settings.fees ?? {}) as BitcoinFeePolicy;
      if (settings.kind !== 'rpc') return createBitcoinGateway({ chain, esplora: httpClient(settings.rpcUrls, settings.rpcTimeoutMs, logger), logger, fees });
      if (!sources?.bitcoinOwnOutputs) throw new ChainsConfigError([`chains.${chain.id}: kind "rpc" needs the service's own outputs, which this composition does not provide`]);
      const node = httpClient(settings.rpcUrls, settings.rpcTimeoutMs, logger, undefined, bitcoinCoreAuthorization(settings.rpcAuth));
      return createBitcoinCoreGateway({ chain, node, ownOutputs: sources.bitcoinOwnOutputs, logger, fees });
    },
    tron: (chain, settings, logger) => createTronGateway({ chain, node: httpClient(settings.rpcUrls, settings.rpcTimeoutMs, logger), logger, fees: (settings.fees ?? {}) as TronFeePolicy }),
    xrp: (chain, settings, logger) => {
      // one client per server with a single attempt: the requester fails over between servers, also on rippled's "too busy"
      const servers = settings.rpcUrls.map((url) => ({ name: url, request: rippledJsonRpc(httpClient([url], settings.rpcTimeoutMs, logger, 1)) }));
      const failover = { timeoutMs: settings.rpcTimeoutMs, logger, ...(transport.sleep ? { sleep: transport.sleep } : {}) };
      const { maxFeeDrops } = (settings.fees ?? {}) as XrpFeePolicy;
      return createXrpGateway({ chain, request: createXrplRequester(servers, failover), logger, ...(maxFeeDrops !== undefined ? { maxFeeDrops: BigInt(maxFeeDrops) } : {}) });
    },
  };
};

export type NodeGateway = ChainGateway & { close?(): void };
export type NodeGatewayFactory = (chain: ChainDefinition, settings: ChainSettings, logger: Logger, sources?: NodeGatewaySources) => NodeGateway;

/**
 * Every family runs on real nodes: EVM over JSON-RPC, Bitcoin over Esplora or Core's JSON-RPC, Tron over java-tron HTTP,
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
export const createNodeGateways = (chains: readonly ChainDefinition[], config: ChainsConfig | null | undefined, logger: Logger, sources: NodeGatewaySources = {}): Map<string, NodeGateway> => {
  const gateways = new Map<string, NodeGateway>();
  for (const chain of chains) {
    const settings = nodeSettingsOf(config, chain.id);
    if (!settings) continue;
    const factory = nodeGatewayFactories[chain.family];
    if (!factory) throw new ChainsConfigError([`chains.${chain.id}: this build has no node gateway for the ${chain.family} family`]);
    gateways.set(chain.id, factory(chain, settings, logger.child({ chainId: chain.id }), sources));
  }
  return gateways;
};
