import type { RouteHandler } from '@hono/zod-openapi';
import type { Kysely } from 'kysely';
import { chainView, listChains, loadChainSettings } from '../../application/chain-enablement.js';
import { requireSupportedChain } from '../../catalog/caip.js';
import type { ChainAvailability } from '../../chains/chain-availability.js';
import type { Database } from '../../db/database.js';
import type { AppEnv } from '../request-context.js';
import type { getChainRoute, listChainsRoute } from './routes.js';

export interface ChainRouteDependencies {
  db: Kysely<Database>;
  availability: ChainAvailability;
}

/** `enabled` is the caller’s organization’s. */
export const chainHandlers = ({ db, availability }: ChainRouteDependencies) => {
  const list: RouteHandler<typeof listChainsRoute, AppEnv> = async (c) => {
    const { enabledOnly } = c.req.valid('query');
    const org = await loadChainSettings(db, availability, c.get('principal').orgId);
    return c.json({ chains: listChains(org, { enabledOnly: enabledOnly === 'true' }) }, 200);
  };

  const get: RouteHandler<typeof getChainRoute, AppEnv> = async (c) => {
    const chain = requireSupportedChain(c.req.valid('param').id);
    const org = await loadChainSettings(db, availability, c.get('principal').orgId);
    return c.json({ chain: chainView(org, chain) }, 200);
  };

  return { list, get };
};
