import type { Logger } from '../../log.js';

/**
 * The metric the operator watches: how far a watcher is behind the chain's head. One log line per
 * call (info; warn past `warnAboveBlocks`), fields named for log queries: chainId, scannedHeight,
 * headHeight, lagBlocks. Returns the lag.
 */
export const logChainLag = (logger: Logger, chainId: string, scannedHeight: number, headHeight: number, warnAboveBlocks = 100): number => {
  const lagBlocks = Math.max(0, headHeight - scannedHeight);
  const fields = { chainId, scannedHeight, headHeight, lagBlocks };
  if (lagBlocks > warnAboveBlocks) logger.warn('chain lag', fields);
  else logger.info('chain lag', fields);
  return lagBlocks;
};
