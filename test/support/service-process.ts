import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';

const root = path.resolve(import.meta.dirname, '../..');
const bin = path.join(root, 'bin', 'ledgergate.mjs');

export interface ServiceProcess {
  child: ChildProcess;
  url: string;
  logs: Record<string, unknown>[];
  /** resolves with the exit code (or the signal name) */
  exited: Promise<number | string>;
  /** resolves once the process has exited and all it wrote has been read into `logs` */
  closed: Promise<void>;
  /** resolves with the first log record that matches, already logged or still to come (bounded, so a missing line fails the test instead of hanging it) */
  logged: (matches: (record: Record<string, unknown>) => boolean, timeoutMs?: number) => Promise<Record<string, unknown>>;
}

/** the embedded PostgreSQL's postmaster under DATA_DIR, null when none runs (no postmaster.pid) */
export const postmasterPid = async (dataDir: string): Promise<number | null> => {
  const text = await fs.readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').catch(() => null);
  return text ? Number(text.split('\n')[0]) : null;
};

export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Polls GET /readyz until it answers 200 (bounded: the wait is not what a test measures). */
export const waitUntilReady = async (url: string, timeoutMs = 60_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await fetch(`${url}/readyz`).then((response) => response.status, () => 0);
    if (status === 200) return;
    if (Date.now() > deadline) throw new Error(`${url} not ready after ${timeoutMs} ms (last /readyz: ${status})`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

/** Starts `ledgergate serve` as a real process and resolves once it listens and, unless told not to wait, is ready. */
export const startServiceProcess = async (env: Record<string, string>, options: { waitReady?: boolean } = {}): Promise<ServiceProcess> => {
  const child = spawn(process.execPath, [bin, 'serve'], {
    cwd: root,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const lineRead = new EventTarget();
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const record = JSON.parse(line) as Record<string, unknown>;
      logs.push(record);
      lineRead.dispatchEvent(new Event('line'));
      if (record.msg === 'ledgergate listening') resolve(String(record.url));
    });
    void exited.then((code) => reject(new Error(`ledgergate exited (${code}) before listening: ${stderr}`)));
  });
  if (options.waitReady !== false) await waitUntilReady(url);
  const logged = (matches: (record: Record<string, unknown>) => boolean, timeoutMs = 10_000) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const look = () => {
        const record = logs.find(matches);
        if (!record) return false;
        lineRead.removeEventListener('line', look);
        clearTimeout(timer);
        resolve(record);
        return true;
      };
      const timer = setTimeout(() => {
        lineRead.removeEventListener('line', look);
        reject(new Error(`no matching log line within ${timeoutMs} ms`));
      }, timeoutMs);
      if (!look()) lineRead.addEventListener('line', look);
    });
  return { child, url, logs, exited, closed, logged };
};

/** Runs the CLI to completion. */
export const runCli = (args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });

/**
 * The environment a CLI or `serve` process of a test runs with: the test database (over its unix
 * socket), a fresh DATA_DIR, a master secret, the PostgreSQL event store.
 */
export const processEnvironment = async (database: { config: { host?: unknown; user?: unknown; password?: unknown; database?: unknown } }, prefix: string, extra: Record<string, string> = {}) => {
  const { host, user, password, database: name } = database.config;
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), `ledgergate-${prefix}-`));
  return {
    DATABASE_URL: `postgresql://${String(user)}:${encodeURIComponent(String(password))}@localhost/${String(name)}?host=${encodeURIComponent(String(host))}`,
    DATA_DIR: dataDir,
    LEDGERGATE_SECRET_KEY: randomBytes(32).toString('base64'),
    EVENTSTORE_URL: '',
    ...extra,
  } as Record<string, string> & { DATA_DIR: string };
};
