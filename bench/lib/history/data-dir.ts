import { loadConfig } from '../../../src/config/env.js';
import { openInfrastructure } from '../../../src/infrastructure.js';
import { createLogger } from '../../../src/log.js';
import { fillHistory, type FillFigures, type FillOptions } from './fill.js';

/**
 * Opens the stores and keys the configuration in `env` names (DATA_DIR's embedded PostgreSQL, or
 * DATABASE_URL), as every entry point of the service does (migrating them first), fills the event
 * store with a history, and closes them.
 */
export const fillConfiguredStore = async (env: NodeJS.ProcessEnv, options: Omit<FillOptions, 'store' | 'signer' | 'keyring'>): Promise<FillFigures> => {
  const config = loadConfig(env);
  const logger = createLogger('warn', { component: 'bench-fill' }, (line) => process.stderr.write(line + '\n'));
  const infrastructure = await openInfrastructure(config, logger, 'bench-fill');
  try {
    if (!infrastructure.signer) throw new Error('no signer: set LEDGERGATE_SIGNER_MNEMONIC (outside production one is generated under DATA_DIR)');
    options.progress(`filling ${config.DATABASE_URL ? 'DATABASE_URL' : config.dataDir} with ${options.events.toLocaleString('en-US')} events across ${options.organizations.toLocaleString('en-US')} organizations`);
    return await fillHistory({ ...options, store: infrastructure.store, signer: infrastructure.signer, keyring: infrastructure.keyring });
  } finally {
    await infrastructure.close();
  }
};
