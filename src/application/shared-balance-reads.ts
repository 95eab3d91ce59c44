import type { ChainGateway } from '../chains/gateway.js';
import type { GatewayLookup } from '../chains/gateway-lookup.js';
import { Coalescer } from '../db/coalescer.js';
import { BoundedMap } from '../lib/bounded-map.js';

/** how many addresses' balance reads are shared at once (an evicted one finishes what it holds) */
const SHARED_ADDRESSES = 10_000;

/**
 * The same gateways, whose balance reads are shared: requests asking one address's balance while a
 * read of it is under way wait for the next read, started after they asked, and share it (so each
 * still sees the chain as it was after its own request began). Under load, 64 requests checking
 * one gas wallet cost two reads instead of 64. Every other call goes to the gateway as it is.
 */
export const sharedBalanceReads = (gateways: GatewayLookup): GatewayLookup => {
  const shared = new Map<ChainGateway, ChainGateway>();
  const reads = new BoundedMap<string, Coalescer<undefined, bigint>>(SHARED_ADDRESSES);
  const sharing = (chainId: string, gateway: ChainGateway): ChainGateway => {
    const balance = (address: string, asset: string): Promise<bigint> => {
      const key = `${chainId}\u0000${address}\u0000${asset}`;
      let coalescer = reads.get(key);
      if (!coalescer) {
        coalescer = new Coalescer(async (batch) => {
          const value = await gateway.balance(address, asset);
          return batch.map(() => value);
        });
        reads.set(key, coalescer);
      }
      return coalescer.add(undefined);
    };
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
