import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const dclint = path.join(root, 'node_modules/.bin/dclint');

type Report = { filePath: string; messages: { rule: string; type: 'error' | 'warning'; message: string; line: number }[] }[];

const lint = async (file: string): Promise<Report> => {
  // dclint exits non-zero on an error; its JSON report is on stdout either way
  const result = await run(dclint, ['-f', 'json', file], { cwd: root, maxBuffer: 8 * 1024 * 1024 }).catch((error: { stdout: string }) => error);
  return JSON.parse(result.stdout) as Report;
};
const errorsOf = (report: Report) => report.flatMap((file) => file.messages.filter((message) => message.type === 'error').map((message) => `${message.line}: ${message.rule}: ${message.message}`));

/**
 * docker-compose.yml against the Compose specification's schema (dclint), as `docker compose
 * config` would read it: this machine has no Compose v2 to ask, CI neither. Style warnings (key
 * order) are not errors.
 */
describe('docker-compose.yml', () => {
  it('is valid against the Compose specification', async () => {
    expect(errorsOf(await lint('docker-compose.yml'))).toEqual([]);
  });

  it('(the check can fail: a misspelt key is an error)', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ledgergate-compose-'));
    try {
      const broken = (await fs.readFile(path.join(root, 'docker-compose.yml'), 'utf8')).replace(/^services:\n/m, 'services:\n  broken:\n    image: busybox\n    restartt: always\n');
      await fs.writeFile(path.join(dir, 'docker-compose.yml'), broken);
      expect(errorsOf(await lint(path.join(dir, 'docker-compose.yml')))).toEqual([expect.stringContaining('invalid-schema')]);
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
