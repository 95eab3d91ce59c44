import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../bench/lib/service.js';
import { isAlive, postmasterPid } from '../support/service-process.js';

const root = path.resolve(import.meta.dirname, '../..');
const bin = path.join(root, 'bin', 'ledgergate.mjs');

/**
 * `ledgergate serve` started, and sent SIGTERM at the moment `sendSignal` picks (it gets the log
 * records so far): resolves with its exit code or signal and everything it logged.
 */
const serveUntilSignalled = async (env: Record<string, string>, sendSignal: (logs: Record<string, unknown>[], signal: () => void) => void) => {
  const child = spawn(process.execPath, [bin, 'serve'], { cwd: root, env: { ...process.env, HOST: '127.0.0.1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: Record<string, unknown>[] = [];
  let signalled = false;
  const signal = () => {
    if (signalled) return;
    signalled = true;
    child.kill('SIGTERM');
  };
  createInterface({ input: child.stdout }).on('line', (line) => {
    logs.push(JSON.parse(line) as Record<string, unknown>);
    sendSignal(logs, signal);
  });
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const exited = await new Promise<number | string>((resolve) => child.on('exit', (code, name) => resolve(code ?? name ?? -1)));
  await closed; // the last lines, written asynchronously, are read once the output streams close
  return { exited, logs, signalled };
};

/**
 * A stop asked for while the service is still starting (the embedded database coming up, the
 * projections catching up on a long history): before, the signal handlers were installed only
 * once the start had finished, so such a signal killed the process and left its PostgreSQL
 * running. Now it exits 0, having stopped what it started.
 */
describe('serve stopped while it starts', () => {
  let dataDir: string;
  const env = () => ({ DATA_DIR: dataDir, DATABASE_URL: '', EVENTSTORE_URL: '' });

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ledgergate-stop-start-'));
    await fs.chmod(dataDir, 0o755);
  });
  afterAll(async () => {
    const pid = await postmasterPid(dataDir);
    if (pid && isAlive(pid)) process.kill(pid, 'SIGINT');
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('exits 0 and stops its PostgreSQL when SIGTERM comes with its first log line (the database starting)', async () => {
    const run = await serveUntilSignalled({ ...env(), PORT: '0' }, (_logs, signal) => signal());
    expect(run.signalled).toBe(true);
    expect(run.exited).toBe(0);
    expect(run.logs.some((record) => record.msg === 'signal received')).toBe(true);
    expect(run.logs.some((record) => record.msg === 'ledgergate listening')).toBe(false);
    expect(run.logs.at(-1)).toMatchObject({ msg: 'stopped' });
    expect(await postmasterPid(dataDir)).toBeNull();
  });

  it('exits 0 and stops its PostgreSQL when SIGTERM comes as /healthz first answers (the workers starting)', async () => {
    const port = await freePort();
    let polling = false;
    const run = await serveUntilSignalled({ ...env(), PORT: String(port) }, (_logs, signal) => {
      if (polling) return;
      polling = true;
      void (async () => {
        for (;;) {
          const status = await fetch(`http://127.0.0.1:${port}/healthz`).then((response) => response.status, () => 0);
          if (status === 200) return signal();
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      })();
    });
    expect(run.signalled).toBe(true);
    expect(run.exited).toBe(0);
    expect(run.logs.at(-1)).toMatchObject({ msg: 'stopped' });
    expect(await postmasterPid(dataDir)).toBeNull();
  });
});
