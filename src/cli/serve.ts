import type { Config } from '../config/env.js';
import type { Logger } from '../log.js';
import { startService } from '../server.js';

/**
 * A signal that arrives this soon after the first is the same request delivered twice (Ctrl-C
 * reaches npm's whole process group and npm forwards it too; `timeout`, tini and process managers
 * forward as well): it must not turn a clean shutdown into an abrupt one.
 */
const DUPLICATE_SIGNAL_WINDOW_MS = 3000;

/** `ledgergate serve`: runs until SIGINT/SIGTERM, then shuts down in order and exits 0. */
export const serveCommand = async (config: Config, logger: Logger): Promise<number> => {
  const service = await startService(config, logger);
  return new Promise<number>((resolve) => {
    let firstSignalAt: number | null = null;
    const shutdown = (signal: NodeJS.Signals) => {
      if (firstSignalAt !== null) {
        if (Date.now() - firstSignalAt < DUPLICATE_SIGNAL_WINDOW_MS) return;
        logger.warn('signal received again during shutdown: exiting now', { signal });
        process.exit(1);
      }
      firstSignalAt = Date.now();
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
