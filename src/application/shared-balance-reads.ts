import type { ChainGateway } from '../chains/gateway.js';
import type { GatewayLookup } from '../chains/gateway-lookup.js';
import { SharedReads } from './shared-reads.js';

/**
 * The same gateways, whose balance reads are shared (SharedReads: each answer read after its ask,
 * or, for an ask that gives `recentMs`, the last answer when it is that recent). Under load, 64
 * requests checking one gas wallet cost two reads instead of 64. Every other call goes to the
 * gateway as it is.
 */
export const sharedBalanceReads = (gateways: GatewayLookup): GatewayLookup => {
  const shared = new Map<ChainGateway, ChainGateway>();
  const reads = new SharedReads<bigint>();
  const sharing = (chainId: string, gateway: ChainGateway): ChainGateway => {
    const balance = (address: string, asset: string, options?: { recentMs?: number }) =>
      reads.read(`${chainId}\u0000${address}\u0000${asset}`, () => gateway.balance(address, asset), options?.recentMs);
    return Object.assign(Object.create(gateway) as ChainGateway, { balance });
  };
  return (chainId) => {
    const gateway = gateways(chainId);
    if (!gateway) return undefined;
    let wrapped = shared.get(gateway);
    if (!wrapped) {
      wrapped = sharing(chainId, gateway);
      shared.set(gateway, wrapped);
    }
    return wrapped;
  };
};
