import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { processEnvironment, runCli } from '../support/service-process.js';

/** Long commands say how far they are on stderr; a command that makes a new database says so. */
describe('CLI: progress on stderr, and the notice of a new database', () => {
  let database: TestDatabase;
  let env: Record<string, string>;
  let orgId: string;

  beforeAll(async () => {
    database = await createTestDatabase('cli_progress');
    env = await processEnvironment(database, 'cli-progress');
    const bootstrap = await runCli(['bootstrap', '--org', 'Acme', '--user', 'alice', '--json'], env);
    expect(bootstrap.code, bootstrap.stderr).toBe(0);
    orgId = (JSON.parse(bootstrap.stdout) as { organization: { id: string } }).organization.id;
  });
  afterAll(async () => {
    await fs.rm(env.DATA_DIR!, { recursive: true, force: true });
    await database.drop();
  });

  it('export and rebuild report their progress on stderr when asked (LEDGERGATE_PROGRESS=1), and stdout stays the answer', async () => {
    const out = path.join(env.DATA_DIR!, 'export.ndjson');
    const exported = await runCli(['export', '--org', orgId, '--out', out], { ...env, LEDGERGATE_PROGRESS: '1' });
    expect(exported.code, exported.stderr).toBe(0);
    const lines = (await fs.readFile(out, 'utf8')).split('\n').filter(Boolean).length;
    expect(lines).toBeGreaterThan(0);
    expect(exported.stderr).toBe(`export: done, ${lines} lines in ${out}\n`);

    const rebuilt = await runCli(['projections', 'rebuild'], { ...env, LEDGERGATE_PROGRESS: '1' });
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(rebuilt.stderr).toMatch(/^rebuild: done, [1-9]\d* events applied$/m);
    expect(rebuilt.stdout).not.toContain('rebuild:');
  });

  it('silent when not asked and not on a terminal, so a pipeline’s stderr holds only errors', async () => {
    const exported = await runCli(['export', '--org', orgId, '--out', path.join(env.DATA_DIR!, 'quiet.ndjson')], env);
    expect(exported).toMatchObject({ code: 0, stderr: '' });
  });

  it('a command run on a DATA_DIR with no database says on stderr that it created one, and where; the next one does not', async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ledgergate-new-db-'));
    const fresh = { DATA_DIR: dataDir, DATABASE_URL: '', EVENTSTORE_URL: '', LEDGERGATE_SECRET_KEY: randomBytes(32).toString('base64') };
    try {
      const first = await runCli(['migrate'], fresh);
      expect(first.code, first.stderr).toBe(0);
      expect(first.stderr).toContain(`created a new, empty database under ${dataDir}`);
      const second = await runCli(['migrate'], fresh);
      expect(second).toMatchObject({ code: 0, stderr: '' });
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
