import type { Config } from '../config/env.js';
import type { Logger } from '../log.js';
import { startService, StoppedDuringStartError, type RunningService } from '../server.js';

/**
 * A signal that arrives this soon after the first is the same request delivered twice (Ctrl-C
 * reaches npm's whole process group and npm forwards it too; `timeout`, tini and process managers
 * forward as well): it must not turn a clean shutdown into an abrupt one.
 */
const DUPLICATE_SIGNAL_WINDOW_MS = 3000;

/**
 * `ledgergate serve`: runs until SIGINT/SIGTERM, then shuts down in order and exits 0. The signals
 * are taken before the start begins: a stop asked for while the projections catch up on a long
 * history ends the start between two batches and stops the embedded database too.
 */
export const serveCommand = async (config: Config, logger: Logger): Promise<number> => {
  const stopping = new AbortController();
  let firstSignalAt: number | null = null;
  const stopRequested = new Promise<void>((resolve) => stopping.signal.addEventListener('abort', () => resolve(), { once: true }));
  const shutdown = (signal: NodeJS.Signals) => {
    if (firstSignalAt !== null) {
      if (Date.now() - firstSignalAt < DUPLICATE_SIGNAL_WINDOW_MS) return;
      logger.warn('signal received again during shutdown: exiting now', { signal });
      process.exit(1);
    }
    firstSignalAt = Date.now();
    logger.info('signal received', { signal });
    stopping.abort();
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  let service: RunningService;
  try {
    service = await startService(config, logger, stopping.signal);
  } catch (error) {
    if (!(error instanceof StoppedDuringStartError)) throw error;
    logger.info('stopped', { during: 'start' });
    return 0;
  }
  await stopRequested;
  return service.stop().then(
    () => 0,
    (error: unknown) => {
      logger.error('shutdown failed', { error });
      return 1;
    },
  );
};
