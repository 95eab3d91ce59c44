import type { Logger } from '../log.js';
import { createBitcoinGateway } from './bitcoin/gateway.js';
import type { ChainDefinition, ChainFamily } from './chain.js';
import type { BitcoinFeePolicy, ChainSettings, TronFeePolicy, XrpFeePolicy } from './config.js';
import type { ChainGateway } from './gateway.js';
import { createHttpClient, type FetchLike } from './rpc/http.js';
import { createTronGateway } from './tron/gateway.js';
import { createXrpGateway } from './xrp/gateway.js';
import { createXrplRequester, rippledJsonRpc } from './xrp/requester.js';

/**
 * Node gateways of the Bitcoin, Tron and XRP families from a CHAINS_CONFIG entry, in the shape of
 * node-gateways.ts's factories (add them to `nodeGatewayFactories`). `rpcUrls` are, per family:
 * Esplora base URLs (https://blockstream.info/api, a self-hosted electrs), java-tron full-node
 * HTTP URLs (http://node:8090, https://api.trongrid.io), rippled JSON-RPC URLs
 * (http://rippled:51234, https://s1.ripple.com:51234). The first is preferred; timeouts, outages
 * and 5xx move to the next, with backoff (src/chains/rpc/failover.ts).
 */
type Factory = (chain: ChainDefinition, settings: Pick<ChainSettings, 'rpcUrls' | 'rpcTimeoutMs' | 'fees'>, logger: Logger) => ChainGateway;

/** the network and the clock, replaced in tests */
export interface NodeTransport {
  fetch?: FetchLike;
  sleep?: (ms: number) => Promise<void>;
}

export const bitcoinTronXrpGatewayFactories = (transport: NodeTransport = {}): Partial<Record<ChainFamily, Factory>> => {
  const httpClient = (endpoints: readonly string[], timeoutMs: number, logger: Logger, maxAttempts?: number) =>
    createHttpClient({ endpoints, timeoutMs, logger, ...transport, ...(maxAttempts ? { maxAttempts } : {}) });
  return {
    // each family's `fees` schema is its own (config.ts validated the entry by the chain's family)
    bitcoin: (chain, settings, logger) =>
      createBitcoinGateway({ chain, esplora: httpClient(settings.rpcUrls, settings.rpcTimeoutMs, logger), logger, fees: (settings.fees ?? {}) as BitcoinFeePolicy }),
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
