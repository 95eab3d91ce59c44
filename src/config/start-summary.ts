import { CHAINS } from '../catalog/registry.js';
import { chainBackend } from '../chains/chain-availability.js';
import { streamCategories } from '../domain/streams.js';
import type { EventStore } from '../eventstore/port.js';
import type { Logger } from '../log.js';
import { serviceParts, type Config, type ServeRole } from './env.js';

/**
 * The one line a new operator reads at start: where the service listens, what it runs (`role`,
 * SERVE_ROLE), which chains run and on what (their nodes, or the built-in devnet), and, when no
 * organization exists yet, the command that creates the first. A production start with no chain running says so at `warn`: it would
 * take requests but never see a deposit or pay a withdrawal.
 */
export const logStartSummary = async (logger: Logger, config: Config, store: Pick<EventStore, 'readAll'>, fields: { url: string; eventStore: string; role: ServeRole }): Promise<void> => {
  const chains = Object.fromEntries(CHAINS.flatMap((chain) => {
    const backend = chainBackend(config, chain.id);
    return backend === 'none' ? [] : [[chain.id, backend === 'node' ? 'nodes' : 'devnet']];
  }));
  const anOrganization = await store.readAll({ maxCount: 1, filter: { categories: [streamCategories.organization] } }).catch(() => null);
  const next = anOrganization?.length === 0 ? { next: 'no organization yet: create one with `npx ledgergate bootstrap --org <name> --user <username>`' } : {};
  // a process without the API answers /healthz, /readyz and /metrics alone: no console, no API document
  const pages = serviceParts(fields.role).has('api') ? { console: `${fields.url}/console`, docs: `${fields.url}/docs` } : {};
  logger.info('ledgergate listening', { ...fields, ...pages, chains, ...next });
  if (config.isProduction && Object.keys(chains).length === 0) {
    logger.warn('no chain is enabled: set CHAINS_CONFIG (with LEDGERGATE_SIGNER_MNEMONIC) so deposits and withdrawals can run', {});
  }
};
