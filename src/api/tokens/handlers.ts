import type { RouteHandler } from '@hono/zod-openapi';
import { listTokens, loadChainSettings } from '../../application/chain-enablement.js';
import type { ChainRouteDependencies } from '../chains/index.js';
import type { AppEnv } from '../request-context.js';
import type { listTokensRoute } from './routes.js';

/** `enabled` is the caller’s organization’s. */
export const tokenHandlers = ({ db, availability }: ChainRouteDependencies) => {
  const list: RouteHandler<typeof listTokensRoute, AppEnv> = async (c) => {
    const { chainId, enabledOnly } = c.req.valid('query');
    const org = await loadChainSettings(db, availability, c.get('principal').orgId);
    return c.json({ tokens: listTokens(org, { chainId, enabledOnly: enabledOnly === 'true' }) }, 200);
  };

  return { list };
};
