import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/database.js';
import { allProjections } from '../../src/projections/registry.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { processEnvironment, runCli, startServiceProcess, type ServiceProcess } from '../support/service-process.js';
import { tableHash } from '../support/stream-totals-projection.js';

/** `ledgergate projections rebuild` as an operator runs it: beside a serving server, which keeps answering. */
describe('CLI: projections rebuild beside a running server', () => {
  let database: TestDatabase;
  let env: Record<string, string>;
  let service: ServiceProcess;
  let apiKey: string;
  let db: ReturnType<typeof createDatabase>;

  beforeAll(async () => {
    database = await createTestDatabase('cli_rebuild');
    db = createDatabase(database.pool);
    env = await processEnvironment(database, 'rebuild', { DEVNET_BLOCK_TIME_MS: '3600000' });
    const bootstrap = await runCli(['bootstrap', '--org', 'Acme', '--user', 'alice', '--user', 'bob', '--json'], env);
    apiKey = (JSON.parse(bootstrap.stdout) as { apiKey: string }).apiKey;
    service = await startServiceProcess(env);
    for (let user = 0; user < 20; user++) {
      const query = new URLSearchParams({ chainId: 'xrpl:mainnet', tokenId: 'xrpl:mainnet/slip44:144', userId: `user-${user}` });
      expect((await fetch(`${service.url}/payments/deposit-address?${query}`, { headers: { 'x-api-key': apiKey } })).status).toBe(200);
    }
  });
  afterAll(async () => {
    service.child.kill('SIGTERM');
    await service.exited;
    await fs.rm(env.DATA_DIR!, { recursive: true, force: true });
    await database.drop();
  });

  const accountsListed = async () => {
    const response = await fetch(`${service.url}/accounts?limit=1000`, { headers: { 'x-api-key': apiKey } });
    expect(response.status).toBe(200);
    return ((await response.json()) as { accounts: unknown[] }).accounts.length;
  };

  it('rebuilds every projection while the server answers in full, and the tables come out identical', async () => {
    await expect.poll(accountsListed, { timeout: 10_000 }).toBe(20);
    const tables = allProjections().flatMap((projection) => projection.tables);
    const before = await Promise.all(tables.map((table) => tableHash(db, table)));

    let rebuilding = true;
    const listed: number[] = [];
    const reader = (async () => {
      while (rebuilding) listed.push(await accountsListed());
    })();
    const result = await runCli(['projections', 'rebuild'], env);
    rebuilding = false;
    await reader;

    expect(result).toMatchObject({ code: 0, stderr: '' });
    for (const projection of allProjections()) expect(result.stdout).toMatch(new RegExp(`^${projection.name}: rebuilt up to position \\d+ in \\d+ ms$`, 'm'));
    expect(listed.length).toBeGreaterThan(0);
    expect(new Set(listed)).toEqual(new Set([20]));
    expect(await Promise.all(tables.map((table) => tableHash(db, table)))).toEqual(before);
  });
});
