import fs from 'node:fs/promises';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const holderIsAlive = async (file: string): Promise<boolean> => {
  const pid = Number(await fs.readFile(file, 'utf8').catch(() => ''));
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Runs `work` while holding an exclusive lock file (O_EXCL create). A lock left by a dead
 * process is taken over. Used so two processes never initialise or start one cluster twice.
 */
export const withFileLock = async <T>(file: string, work: () => Promise<T>, timeoutMs = 120_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await fs.writeFile(file, String(process.pid), { flag: 'wx', mode: 0o600 });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (!(await holderIsAlive(file))) {
        await fs.rm(file, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for the lock ${file}`);
      await sleep(100);
    }
  }
  try {
    return await work();
  } finally {
    await fs.rm(file, { force: true });
  }
};
