import type { Kysely } from 'kysely';
import type { DepositServices } from '../../application/deposits.js';
import type { Database } from '../../db/database.js';
import type { PoolTarget } from '../../db/pool.js';
import type { Logger } from '../../log.js';
import type { ChainGateway } from '../../chains/gateway.js';
import { ChainWatcher, type ChainWatcherOptions } from './chain-watcher.js';
import { FollowedEventsReader } from './followed-events.js';
import { HeadNotifications } from './head-notifications.js';
import { WatcherLockSession } from './lock-session.js';

export { ChainWatcher, type ChainWatcherOptions, type WatcherState } from './chain-watcher.js';
export { REMEMBERED_BLOCKS } from './block-log.js';
export { WatcherLockSession } from './lock-session.js';
export { HeadNotifications } from './head-notifications.js';

export interface ChainWatchers {
  readonly watchers: readonly ChainWatcher[];
  start(): void;
  /** each watcher finishes its block in flight, the shared read its batch in flight; then the lock session ends */
  stop(): Promise<void>;
}

/**
 * A watcher wakes at least twice per block interval, so a deposit is seen within about half a block
 * of being mined; bounded, so a long devnet interval (tests mine by hand) still gets a prompt look
 * and a short one does not hammer the gateway.
 */
export const watcherPollIntervalMs = (blockTimeMs: number): number => Math.min(1000, Math.max(50, Math.floor(blockTimeMs / 2)));

/** One watcher per chain that has a gateway, sharing one advisory-lock session and one reader of the events they follow. */
export const createChainWatchers = (options: {
  gateways: readonly ChainGateway[];
  services: DepositServices;
  db: Kysely<Database>;
  database: PoolTarget;
  logger: Logger;
  pollIntervalMs: number;
  organizationWalletsAt?: ChainWatcherOptions['organizationWalletsAt'];
  /** a channel that announces the heads of these chains (the devnet's): their watchers wait on it instead of polling */
  headChannel?: { channel: string; chainIds: ReadonlySet<string> };
}): ChainWatchers => {
  const locks = new WatcherLockSession(options.database, options.logger);
  const events = new FollowedEventsReader(options.services.store);
  const headNotifications = options.headChannel ? new HeadNotifications(options.database, options.headChannel.channel, options.headChannel.chainIds, options.logger) : undefined;
  const watchers = options.gateways.map(
    (gateway) =>
      new ChainWatcher({
        gateway,
        services: options.services,
        db: options.db,
        locks,
        events,
        logger: options.logger,
        pollIntervalMs: options.pollIntervalMs,
        headNotifications,
        organizationWalletsAt: options.organizationWalletsAt,
      }),
  );
  return {
    watchers,
    start: () => watchers.forEach((watcher) => watcher.start()),
    stop: async () => {
      await Promise.all(watchers.map((watcher) => watcher.stop()));
      await events.idle();
      await headNotifications?.close();
      await locks.close();
    },
  };
};
