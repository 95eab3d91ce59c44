import lockfile from 'proper-lockfile';

/**
 * Runs `work` while holding an exclusive lock on `file`, with `proper-lockfile`: the lock is a
 * directory created atomically (`file.lock`, mkdir) whose time the holder refreshes; one left by a
 * dead process goes stale and is taken over, safely even when two processes find it stale at once.
 * Used so two processes never initialise or start one cluster twice.
 */
export const withFileLock = async <T>(file: string, work: () => Promise<T>, timeoutMs = 120_000): Promise<T> => {
  const pollMs = 100;
  const release = await lockfile.lock(file, {
    realpath: false,
    stale: 10_000,
    update: 2_000,
    retries: { retries: Math.ceil(timeoutMs / pollMs), factor: 1, minTimeout: pollMs, maxTimeout: pollMs },
  });
  try {
    return await work();
  } finally {
    await release();
  }
};
