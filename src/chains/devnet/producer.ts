import type { Logger } from '../../log.js';
import { headTimes, withFreeChains } from './chain-state.js';
import { headIsYoung, type DevnetControls } from './controls.js';
import { mineEmptyBlocks } from './mining.js';
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

/** how late a due block may be mined so that chains due soon after it are mined in the same look, as a share of the block time */
const JOINING_SHARE = 4;

/**
 * How long to wait (0: none) before mining, so that the chains due within a quarter of a block
 * time after the one due first are mined together with it: chains whose blocks drifted apart (a
 * chain passed over while a batch held its lock, mined on a later look) are brought back into one
 * look, which reads every head, takes the locks and commits once for all of them instead of once
 * for each. No block is mined before its time; one is mined at most a quarter of a block time late.
 */
export const waitForJoiningChains = (heads: ReadonlyMap<string, Date>, seen: Date, blockTimeMs: number): number => {
  const dueTimes = [...heads.values()].map((at) => at.getTime() + blockTimeMs);
  const first = Math.min(...dueTimes);
  if (first > seen.getTime()) return 0;
  const lastJoining = Math.max(...dueTimes.filter((dueAt) => dueAt <= first + blockTimeMs / JOINING_SHARE));
  return Math.max(0, lastJoining - seen.getTime());
};

/**
 * One look of the block producer: every chain's head read in one statement, then a block mined on
 * each chain whose head is at least `blockTimeMs` old, all in one transaction holding the locks of
 * those no other transaction holds (withFreeChains: it never waits, so a batch of deposits on every
 * chain never queues behind a producer that itself queues behind another batch; a chain left out
 * is being injected into, mined or broadcast to, and is looked at again on the next look). Under
 * its lock each chain is looked at again, so several processes on one database share one block
 * rate instead of adding theirs up. A chain with no row yet is mined on its own (its lock creates
 * its genesis). When the joint transaction fails, each due chain is mined in a transaction of its
 * own, so one chain that cannot be mined never stops the others' blocks. Returns how long until the
 * next chain's block is due (at most `blockTimeMs`).
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
  const joining = waitForJoiningChains(heads, seen, blockTimeMs);
  if (joining > 0) return joining;
  const mineAlone = (controls: DevnetControls) =>
    controls.mineIfDue(blockTimeMs).catch((chainError: unknown) => logger.warn('devnet block production failed', { chainId: controls.chain.id, error: errorMessage(chainError) }));
  for (const controls of due) if (!heads.has(controls.chain.id)) await mineAlone(controls);
  const started = due.filter((controls) => heads.has(controls.chain.id));
  if (started.length > 0) {
    try {
      await withFreeChains(
        db,
        started.map((controls) => controls.chain),
        async (trx, states) => {
          // due under the lock too (another process may have mined meanwhile): the empty ones mined together, the others one by one
          const dueStates = [...states.values()].filter((state) => !headIsYoung(new Date(state.head.timestamp), clock(), blockTimeMs));
          const busy = new Set((await mineEmptyBlocks(trx, dueStates, clock())).map((state) => state.chain.id));
          for (const controls of started) {
            const state = states.get(controls.chain.id);
            if (state && busy.has(controls.chain.id)) await controls.mineIfDueLocked(trx, state, blockTimeMs);
          }
        },
      );
    } catch (error) {
      logger.warn('devnet block production failed; mining each chain on its own', { chainIds: started.map((controls) => controls.chain.id), error: errorMessage(error) });
      for (const controls of started) await mineAlone(controls);
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
