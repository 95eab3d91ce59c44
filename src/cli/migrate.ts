import type { Config } from '../config/env.js';
import { openInfrastructure } from '../infrastructure.js';
import type { Logger } from '../log.js';

/** `ledgergate migrate`: apply the event-store and read-model migrations, then exit. */
export const migrateCommand = async (config: Config, logger: Logger): Promise<number> => {
  const infrastructure = await openInfrastructure(config, logger, 'cli');
  await infrastructure.close();
  process.stdout.write('migrations applied\n');
  return 0;
};
