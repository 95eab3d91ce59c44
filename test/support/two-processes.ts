import fs from 'node:fs/promises';
import { expect } from 'vitest';
import { createTestDatabase, type TestDatabase } from './database.js';
import { processEnvironment, runCli, startServiceProcess, type ServiceProcess } from './service-process.js';

export interface TwoProcesses<Bootstrap> {
  first: ServiceProcess;
  second: ServiceProcess;
  /** the database both share */
  database: TestDatabase;
  /** what `ledgergate bootstrap --json` printed for the one organization (Acme, user alice) */
  bootstrap: Bootstrap;
  /** both processes stopped by SIGTERM, their DATA_DIR and database removed */
  stop(): Promise<void>;
}

/** Two `serve` processes on one fresh test database, one organization bootstrapped by the CLI first. */
export const startTwoProcesses = async <Bootstrap>(label: string): Promise<TwoProcesses<Bootstrap>> => {
  const database = await createTestDatabase(label);
  const env = await processEnvironment(database, label, { RATE_LIMIT_PER_MINUTE: '1000000' });
  const bootstrap = await runCli(['bootstrap', '--org', 'Acme', '--user', 'alice', '--json'], env);
  expect(bootstrap.code, bootstrap.stderr).toBe(0);
  const [first, second] = await Promise.all([startServiceProcess(env), startServiceProcess(env)]);
  return {
    first,
    second,
    database,
    bootstrap: JSON.parse(bootstrap.stdout) as Bootstrap,
    stop: async () => {
      first.child.kill('SIGTERM');
      second.child.kill('SIGTERM');
      await Promise.all([first.exited, second.exited]);
      await fs.rm(env.DATA_DIR, { recursive: true, force: true });
      await database.drop();
    },
  };
};
