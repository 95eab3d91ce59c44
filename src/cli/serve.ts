import type { Config } from '../config/env.js';
import type { Logger } from '../log.js';
import { startService } from '../server.js';

/** `ledgergate serve`: runs until SIGINT/SIGTERM, then shuts down in order and exits 0. */
export const serveCommand = async (config: Config, logger: Logger): Promise<number> => {
  const service = await startService(config, logger);
  return new Promise<number>((resolve) => {
    let stopping = false;
    const shutdown = (signal: NodeJS.Signals) => {
      if (stopping) {
        logger.warn('second signal: exiting now', { signal });
        process.exit(1);
      }
      stopping = true;
      logger.info('signal received', { signal });
      service.stop().then(
        () => resolve(0),
        (error: unknown) => {
          logger.error('shutdown failed', { error });
          resolve(1);
        },
      );
    };
    process.on('SIGINT', shutdown);
    process.on('SIGTERM', shutdown);
  });
};
