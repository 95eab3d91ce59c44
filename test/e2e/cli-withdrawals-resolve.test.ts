import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { processEnvironment, runCli } from '../support/service-process.js';

/** `ledgergate withdrawals resolve` as an operator runs it: its usage, and a clear refusal that changes nothing. */
describe('CLI: withdrawals resolve', () => {
  let database: TestDatabase;
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await createTestDatabase('cli_resolve');
    env = await processEnvironment(database, 'cli');
  });
  afterAll(async () => {
    await fs.rm(env.DATA_DIR!, { recursive: true, force: true });
    await database.drop();
  });

  it('without an outcome, a reason and an operator: the usage on stderr, exit 2', async () => {
    const result = await runCli(['withdrawals', 'resolve', randomUUID(), '--outcome', 'maybe'], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('usage: ledgergate withdrawals resolve <withdrawalId> --outcome completed|failed');
  });

  it('an unknown withdrawal: WITHDRAWAL_NOT_FOUND on stderr, exit 1, nothing written', async () => {
    const result = await runCli(['withdrawals', 'resolve', randomUUID(), '--outcome', 'failed', '--reason', 'checked', '--operator', 'olga'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^WITHDRAWAL_NOT_FOUND: No withdrawal /m);
    expect(result.stdout).toBe('');
    expect(Number((await database.pool.query('select count(*) from eventstore.events')).rows[0].count)).toBe(0);
  });
});
