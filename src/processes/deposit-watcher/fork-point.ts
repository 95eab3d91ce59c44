import type { ScannedBlock } from './block-log.js';

/**
 * Walks back through the remembered blocks (newest first) to the newest one the chain still has:
 * the fork point, the last block both chains share. Null when none of them is left (a reorg deeper
 * than the watcher remembers).
 */
export const findForkPoint = async (remembered: readonly ScannedBlock[], canonicalHash: (number: number) => Promise<string | null>): Promise<number | null> => {
  for (const block of remembered) {
    if ((await canonicalHash(block.number)) === block.hash) return block.number;
  }
  return null;
};
