import type { RouteHandler } from '@hono/zod-openapi';
import type { Kysely } from 'kysely';
import { hasGasWallet, type OrganizationWallets } from '../../application/organization-wallets.js';
import type { ChainAvailability } from '../../chains/chain-availability.js';
import { isChainEnabled, loadChainSettings } from '../../application/chain-enablement.js';
import type { GatewayLookup } from '../../chains/gateway-lookup.js';
import { CHAINS } from '../../catalog/registry.js';
import type { Database } from '../../db/database.js';
import { DomainError } from '../../errors.js';
import type { AppEnv } from '../request-context.js';
import type { gasStationRoute } from './routes.js';

export interface GasStationDependencies {
  db: Kysely<Database>;
  availability: ChainAvailability;
  wallets: OrganizationWallets;
  gateways: GatewayLookup;
}

/** Every EVM and Tron chain enabled for the organization, its gas wallet and that wallet's balance on the chain. */
export const gasStationHandlers = ({ db, availability, wallets, gateways }: GasStationDependencies) => {
  const gasStation: RouteHandler<typeof gasStationRoute, AppEnv> = async (c) => {
    const { orgId, userId } = c.get('principal');
    const org = await loadChainSettings(db, availability, orgId);
    const chains = CHAINS.filter((chain) => hasGasWallet(chain) && isChainEnabled(org, chain.id));
    const gasWallets = await Promise.all(
      chains.map(async (chain) => {
        const gateway = gateways(chain.id);
        if (!gateway) throw new DomainError('SERVICE_UNAVAILABLE', `chain ${chain.id} has no gateway`, { chainId: chain.id });
        const { gasAddress } = await wallets.walletsOf(orgId, chain.id, { actor: userId, requestId: c.get('requestId') });
        const balance = await gateway.balance(gasAddress!, 'native');
        const { name, properties } = chain;
        return { chainId: chain.id, address: gasAddress!, balance: balance.toString(), Chain: { name, properties: { nativeCurrency: properties.nativeCurrency, decimals: properties.decimals } } };
      }),
    );
    return c.json({ gasWallets }, 200);
  };

  return { gasStation };
};
