import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/db/embedded-postgres.js';
import type { Logger } from '../../src/log.js';
import type { Lifecycle } from './lifecycle.js';

/**
 * A throwaway embedded PostgreSQL in a fresh temporary DATA_DIR, with the server's default
 * durability (fsync and synchronous_commit on). Stopping it and removing the directory are
 * registered with the lifecycle as soon as each exists.
 */
export const startTempPostgres = async (
  lifecycle: Lifecycle,
  logger: Logger,
  settings?: Record<string, string>,
): Promise<{ server: EmbeddedPostgres; dataDir: string }> => {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ledgergate-bench-'));
  lifecycle.onTeardown('remove the data directory', () => fs.rm(dataDir, { recursive: true, force: true }));
  await fs.chmod(dataDir, 0o755); // as root, PostgreSQL runs as `postgres`, which must reach it
  const server = await startEmbeddedPostgres({ dataDir, logger, ...(settings ? { settings } : {}) });
  lifecycle.onTeardown('stop PostgreSQL', () => server.stop());
  return { server, dataDir };
};
