import fs from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { processEnvironment, runCli } from '../support/service-process.js';

const issuedUser = {
  id: expect.stringMatching(/^[0-9a-f-]{36}$/),
  username: expect.any(String),
  password: expect.stringMatching(/^.{20,}$/),
  totpSecret: expect.stringMatching(/^[A-Z2-7]{32}$/),
  otpauthUrl: expect.stringMatching(/^otpauth:\/\/totp\/ledgergate:[^?]+\?.*secret=[A-Z2-7]{32}/),
};

/** `ledgergate bootstrap` and `ledgergate user add` as an operator runs them (CONTRACT §2). */
describe('CLI: bootstrap and user add', () => {
  let database: TestDatabase;
  let env: Record<string, string>;

  beforeAll(async () => {
    database = await createTestDatabase('cli');
    env = await processEnvironment(database, 'cli');
  });
  afterAll(async () => {
    await fs.rm(env.DATA_DIR!, { recursive: true, force: true });
    await database.drop();
  });

  const organizationCount = async () => Number((await database.pool.query('select count(*) from organizations')).rows[0].count);

  it('bootstrap prints exactly one JSON object of CONTRACT §2’s shape', async () => {
    const result = await runCli(['bootstrap', '--org', 'Acme Ltd', '--user', 'alice', '--user', 'bob', '--min-signers', '2', '--json'], env);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const output = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(output).toEqual({
      organization: { id: expect.stringMatching(/^[0-9a-f-]{36}$/), name: 'Acme Ltd' },
      apiKey: expect.stringMatching(/^lgk_[0-9a-f]{24}_[A-Za-z0-9_-]{43}$/),
      webhookSigningSecret: expect.stringMatching(/^whsec_/),
      users: [
        { ...issuedUser, username: 'alice' },
        { ...issuedUser, username: 'bob' },
      ],
    });
    const rows = await database.pool.query('select name, min_withdrawal_signers from organizations');
    expect(rows.rows).toEqual([{ name: 'Acme Ltd', min_withdrawal_signers: 2 }]);
    // secrets are stored hashed or sealed, never as printed
    const events = JSON.stringify((await database.pool.query('select data from eventstore.events')).rows);
    const users = output.users as { password: string; totpSecret: string }[];
    for (const secret of [output.apiKey, output.webhookSigningSecret, users[0]!.password, users[0]!.totpSecret]) {
      expect(events).not.toContain(String(secret));
    }

    const added = await runCli(['user', 'add', '--org', (output.organization as { id: string }).id, '--username', 'carol', '--json'], env);
    expect(added.code).toBe(0);
    expect(JSON.parse(added.stdout)).toEqual({ ...issuedUser, username: 'carol' });
  });

  it('refuses a username already taken anywhere, clearly, and changes nothing', async () => {
    const before = await organizationCount();
    const eventsBefore = (await database.pool.query('select count(*) from eventstore.events')).rows[0].count;
    const taken = await runCli(['bootstrap', '--org', 'Other', '--user', 'dave', '--user', 'ALICE', '--json'], env);
    expect(taken.code).toBe(1);
    expect(taken.stdout).toBe('');
    expect(taken.stderr).toContain('username ALICE is taken');
    expect(await organizationCount()).toBe(before);
    expect((await database.pool.query('select count(*) from eventstore.events')).rows[0].count).toBe(eventsBefore);
  });

  it('refuses more signers than users, and a missing option, with a usage line', async () => {
    const tooMany = await runCli(['bootstrap', '--org', 'X', '--user', 'erin', '--min-signers', '2', '--json'], env);
    expect(tooMany.code).toBe(1);
    expect(tooMany.stderr).toContain('minWithdrawalSigners must be an integer between 1 and 1');
    const missing = await runCli(['bootstrap', '--org', 'X', '--json'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('usage: ledgergate bootstrap');
  });
});
