import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/api-harness.js';

const run = promisify(execFile);
const redocly = path.resolve(import.meta.dirname, '../../node_modules/.bin/redocly');

/** The served API document, as client generators and linters read it: `redocly lint` finds no error. */
describe('the API document passes redocly lint', () => {
  let service: TestService;
  let dir: string;

  beforeAll(async () => {
    service = await startTestService();
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ledgergate-openapi-'));
  });
  afterAll(async () => {
    await service?.stop();
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  it('0 errors (recommended rules)', async () => {
    const file = path.join(dir, 'openapi.json');
    await fs.writeFile(file, await (await service.app.request('/openapi.json')).text());
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
    const result = await run(redocly, ['lint', file, '--format', 'json'], { maxBuffer: 16 * 1024 * 1024, env }).catch((error: { stdout: string; stderr: string }) => error);
    const report = JSON.parse(result.stdout) as { totals: { errors: number; warnings: number }; problems: { ruleId: string; message: string; severity: string; location: { pointer: string }[] }[] };
    const errors = report.problems.filter((problem) => problem.severity === 'error').map((problem) => `${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`);
    expect(errors).toEqual([]);
  }, 120_000);
});
