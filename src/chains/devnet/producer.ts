import type { Logger } from '../../log.js';
import type { DevnetControls } from './controls.js';

export interface BlockProducer {
  stop(): Promise<void>;
}

/**
 * Mines a block on every devnet chain each `blockTimeMs` (CONTRACT §8). It looks four times per
 * interval and mines only when the head is at least `blockTimeMs` old, so several processes on one
 * database share one block rate instead of adding theirs up (the chain's row lock does the rest).
 */
export const startBlockProducer = (options: { chains: readonly DevnetControls[]; blockTimeMs: number; logger: Logger }): BlockProducer => {
  const { chains, blockTimeMs, logger } = options;
  const pollMs = Math.max(50, Math.floor(blockTimeMs / 4));
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();

  const tick = async () => {
    for (const controls of chains) {
      if (stopped) return;
      await controls.mineIfDue(blockTimeMs).catch((error: unknown) =>
        logger.warn('devnet block production failed', { chainId: controls.chain.id, error: error instanceof Error ? error.message : String(error) }),
      );
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      inFlight = tick().finally(schedule);
    }, pollMs);
    timer.unref?.();
  };
  schedule();

  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await inFlight;
    },
  };
};
