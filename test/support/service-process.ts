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
}

/** Starts `ledgergate serve` as a real process and resolves once it listens. */
export const startServiceProcess = async (env: Record<string, string>): Promise<ServiceProcess> => {
  const child = spawn(process.execPath, [bin, 'serve'], {
    cwd: root,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const record = JSON.parse(line) as Record<string, unknown>;
      logs.push(record);
      if (record.msg === 'ledgergate listening') resolve(String(record.url));
    });
    void exited.then((code) => reject(new Error(`ledgergate exited (${code}) before listening: ${stderr}`)));
  });
  return { child, url, logs, exited };
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
