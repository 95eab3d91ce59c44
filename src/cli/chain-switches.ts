import { parseArgs } from 'node:util';
import { setChainEnabled, setTokenEnabled } from '../application/chain-switches.js';
import type { CommandServices } from '../application/command-handler.js';
import { chainAvailability } from '../chains/chain-availability.js';
import { requireKnownToken, requireSupportedChain } from '../catalog/caip.js';
import { chainView, loadChainSettings, tokenView } from '../application/chain-enablement.js';
import type { Config } from '../config/env.js';
import type { Infrastructure } from '../infrastructure.js';
import type { Logger } from '../log.js';
import { makeVisible, withInfrastructure } from './organizations.js';

const servicesOf = (infrastructure: Infrastructure): CommandServices => ({ store: infrastructure.store, clock: () => new Date() });

/** Once the change is in the read model, the item as the organization now sees it (what GET /chains/:id and /tokens answer). */
const afterChange = async (infrastructure: Infrastructure, config: Config, logger: Logger, orgId: string, position: bigint | null) => {
  if (position !== null) await makeVisible(infrastructure, logger, position);
  return loadChainSettings(infrastructure.db, chainAvailability(config), orgId);
};

/** `ledgergate chains enable|disable --org <orgId> --chain <chainId>` */
export const chainSwitchCommand = (enabled: boolean) => async (config: Config, logger: Logger, args: string[]): Promise<number> => {
  const { values } = parseArgs({ args, options: { org: { type: 'string' }, chain: { type: 'string' }, json: { type: 'boolean' } } });
  if (!values.org || !values.chain) throw new Error(`usage: ledgergate chains ${enabled ? 'enable' : 'disable'} --org <orgId> --chain <chainId>`);
  const orgId = values.org;
  const chain = requireSupportedChain(values.chain);
  return withInfrastructure(config, logger, async (infrastructure) => {
    const { position } = await setChainEnabled(servicesOf(infrastructure), orgId, chain.id, enabled, { actor: 'cli', orgId });
    const org = await afterChange(infrastructure, config, logger, orgId, position);
    return { orgId, chain: chainView(org, chain) };
  });
};

/** `ledgergate tokens enable|disable --org <orgId> --token <tokenId>` */
export const tokenSwitchCommand = (enabled: boolean) => async (config: Config, logger: Logger, args: string[]): Promise<number> => {
  const { values } = parseArgs({ args, options: { org: { type: 'string' }, token: { type: 'string' }, json: { type: 'boolean' } } });
  if (!values.org || !values.token) throw new Error(`usage: ledgergate tokens ${enabled ? 'enable' : 'disable'} --org <orgId> --token <tokenId>`);
  const orgId = values.org;
  const token = requireKnownToken(values.token);
  return withInfrastructure(config, logger, async (infrastructure) => {
    const { position } = await setTokenEnabled(servicesOf(infrastructure), orgId, token.id, enabled, { actor: 'cli', orgId });
    const org = await afterChange(infrastructure, config, logger, orgId, position);
    return { orgId, token: tokenView(org, token) };
  });
};
