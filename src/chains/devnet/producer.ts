import type { Logger } from '../../log.js';
import { headTimes, withLockedChains } from './chain-state.js';
import { headIsYoung, type DevnetControls } from './controls.js';
import type { DevnetDb } from './tables.js';

export interface BlockProducer {
  stop(): Promise<void>;
}

export interface BlockProducerOptions {
  chains: readonly DevnetControls[];
  db: DevnetDb;
  /** the devnet's clock, which block times are read by */
  clock: () => Date;
  blockTimeMs: number;
  logger: Logger;
}

/** the shortest wait between two looks (a head just short of due, a clock that jumps) */
const MIN_WAIT_MS = 10;

const errorMessage = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * One look of the block producer: every chain's head read in one statement, then a block mined on
 * each chain whose head is at least `blockTimeMs` old, all in one transaction holding their locks
 * (in chain-id order, as a batch of deposits takes them, so the two never wait on each other in a
 * circle). Under its lock each chain is looked at again, so several processes on one database share
 * one block rate instead of adding theirs up. When that transaction fails, each due chain is mined
 * in a transaction of its own, so one chain that cannot be mined never stops the others' blocks.
 * Returns how long until the next chain's block is due (at most `blockTimeMs`).
 */
export const mineDueChains = async ({ chains, db, clock, blockTimeMs, logger }: BlockProducerOptions): Promise<number> => {
  const heads = await headTimes(
    db,
    chains.map((controls) => controls.chain.id),
  );
  const seen = clock();
  // a chain with no row yet is due: its lock creates its genesis, then its first block is mined
  const due = chains.filter((controls) => {
    const at = heads.get(controls.chain.id);
    return at === undefined || !headIsYoung(at, seen, blockTimeMs);
  });
  if (due.length > 0) {
    try {
      await withLockedChains(
        db,
        due.map((controls) => controls.chain),
        async (trx, states) => {
          for (const controls of due) await controls.mineIfDueLocked(trx, states.get(controls.chain.id)!, blockTimeMs);
        },
      );
    } catch (error) {
      logger.warn('devnet block production failed; mining each chain on its own', { chainIds: due.map((controls) => controls.chain.id), error: errorMessage(error) });
      for (const controls of due) {
        await controls.mineIfDue(blockTimeMs).catch((chainError: unknown) => logger.warn('devnet block production failed', { chainId: controls.chain.id, error: errorMessage(chainError) }));
      }
    }
  }
  const now = clock().getTime();
  const waits = chains.filter((controls) => !due.includes(controls)).map((controls) => heads.get(controls.chain.id)!.getTime() + blockTimeMs - now);
  return Math.max(MIN_WAIT_MS, Math.min(blockTimeMs, ...waits));
};

/**
 * Mines a block on every devnet chain each `blockTimeMs` (CONTRACT §8): it looks when the next
 * chain's block is due, not on a fixed tick, and mines every chain due then together
 * (mineDueChains).
 */
export const startBlockProducer = (options: BlockProducerOptions): BlockProducer => {
  const { blockTimeMs, logger } = options;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();

  const look = () =>
    mineDueChains(options).catch((error: unknown) => {
      logger.warn('devnet block production failed', { error: errorMessage(error) });
      return blockTimeMs;
    });
  const schedule = (waitMs: number) => {
    if (stopped) return;
    timer = setTimeout(() => {
      inFlight = look().then(schedule);
    }, waitMs);
    timer.unref?.();
  };
  // the first look a block time after the start, as every later one at the latest
  schedule(blockTimeMs);

  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await inFlight;
    },
  };
};
