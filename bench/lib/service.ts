import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Lifecycle } from './lifecycle.js';
import { loadConfig, SERVICE_PARTS, serviceParts, type ServicePart } from '../../src/config/env.js';

const root = path.resolve(import.meta.dirname, '../..');
const bin = path.join(root, 'bin', 'ledgergate.mjs');

/**
 * How `npm start` (`script`: `start`, or `start:api` for an `api` process) runs the service (the
 * environment it sets, e.g. MALLOC_ARENA_MAX, and node's flags, e.g. its heap cap): the bench boots
 * each process the same way.
 */
const startCommand = async (script: 'start' | 'start:api'): Promise<{ env: Record<string, string>; flags: string[] }> => {
  const { scripts } = JSON.parse(await fs.readFile(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<typeof script, string> };
  const words = scripts[script].split(/\s+/);
  const assignments = words.slice(0, words.indexOf('node')).map((word) => /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(word)).filter((match) => match !== null);
  return { env: Object.fromEntries(assignments.map(([, name, value]) => [name!, value!])), flags: words.filter((word) => word.startsWith('--')) };
};

/**
 * How the bench runs the service: `split` (the default), one `SERVE_ROLE=api` process and one
 * `SERVE_ROLE=workers`; `one`, a single process running all; or the SERVE_ROLE of each process,
 * separated by spaces (e.g. `api projections webhooks,chains`: the projections in a process of their own).
 */
export type ServiceLayout = string;

/** each process's SERVE_ROLE, in the order they start: the background first (the first starts the embedded PostgreSQL), the API last */
const layoutRoles = (layout: ServiceLayout): string[] => {
  const roles = layout === 'one' ? ['all'] : layout === 'split' ? ['workers', 'api'] : layout.split(/\s+/);
  const parts = roles.flatMap((role) => [...serviceParts(loadConfig({ SERVE_ROLE: role }).SERVE_ROLE)]);
  if (parts.length !== SERVICE_PARTS.length || new Set(parts).size !== parts.length) throw new Error(`BENCH_SERVICE_PROCESSES must run each of ${SERVICE_PARTS.join(', ')} once, not ${layout}`);
  return roles.sort((a, b) => Number(serviceParts(a).has('api')) - Number(serviceParts(b).has('api')));
};

/** `two processes: SERVE_ROLE=api and SERVE_ROLE=workers` */
export const describeLayout = (layout: ServiceLayout): string => {
  const roles = layoutRoles(layout);
  const count = ['one process', 'two processes', 'three processes', 'four processes'][roles.length - 1] ?? `${roles.length} processes`;
  const named = roles.map((role) => `SERVE_ROLE=${role}`);
  return `${count}: ${named.length > 1 ? `${named.slice(0, -1).join(', ')} and ${named[named.length - 1]}` : named[0]}`;
};

/** the layout the bench runs unless told otherwise, the deployment docs/operations.md recommends */
const DEFAULT_LAYOUT = 'split';

/** BENCH_SERVICE_PROCESSES, or the default layout */
export const serviceLayout = (): ServiceLayout => {
  const value = process.env.BENCH_SERVICE_PROCESSES?.trim() || DEFAULT_LAYOUT;
  layoutRoles(value);
  return value;
};

export interface ServiceProcessInfo {
  /** its SERVE_ROLE */
  role: string;
  /** its node process (spawned directly, never through a shell: its /proc status is the service's) */
  pid: number;
}

export interface BenchService {
  /** where the API answers */
  url: string;
  /** where the chains' /metrics answers (the chain workers' first passes): `url` when one process runs everything */
  workersUrl: string;
  /** where the projections' /metrics answers (their batches, their process's event loop) */
  projectionsUrl: string;
  layout: ServiceLayout;
  /** the service's processes: one `all`, or `api` and `workers` */
  processes: ServiceProcessInfo[];
  dataDir: string;
  /** the environment the service runs with; the CLI gets the same to find the running server */
  env: Record<string, string>;
  /** from the first spawn to the first /healthz 200 of every process, ms */
  healthyAfterMs: number;
  /** polls the API's /readyz until it answers 200 (the projections caught up with what the store held at start); answers ms since the first spawn */
  untilReady(timeoutMs: number): Promise<number>;
  /** ms since the first spawn, now */
  sinceSpawnMs(): number;
  /** the last lines the service wrote (warnings and errors at LOG_LEVEL=warn), every process's */
  recentLogLines(): string[];
  /** SIGTERM and wait for the exit, the API first (also a teardown step; a second call does nothing) */
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A port nobody listens on right now: the service logs its URL only at info level, so the bench picks the port. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });

/** Polls `path` every 50 ms until it answers 200 (a fine grain: start-up times are figures of the bench). */
const waitFor200 = async (url: string, path: string, exited: () => string | null, timeoutMs: number): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const why = exited();
    if (why !== null) throw new Error(`ledgergate exited (${why}) before ${path} answered 200`);
    const ok = await fetch(`${url}${path}`).then((response) => response.ok, () => false);
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`ledgergate did not answer ${path} with 200 within ${timeoutMs} ms`);
    await sleep(50);
  }
};

/** A fresh, empty DATA_DIR under the temporary directory, removed at teardown. */
export const benchDataDir = async (lifecycle: Lifecycle): Promise<string> => {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ledgergate-bench-'));
  lifecycle.onTeardown('remove the data directory', () => fs.rm(dataDir, { recursive: true, force: true }));
  await fs.chmod(dataDir, 0o755); // as root, PostgreSQL runs as `postgres`, which must reach it
  return dataDir;
};

interface ServeProcess {
  pid: number;
  /** why it exited (code or signal), null while it runs */
  exitReason(): string | null;
  stop(): Promise<void>;
}

/** Spawns `ledgergate serve` with `env`, its output kept in `lines`; stop: SIGTERM, SIGKILL after 60 s. */
const spawnServe = (env: Record<string, string>, nodeFlags: string[], lines: string[], progress: (message: string) => void): ServeProcess => {
  const { NODE_OPTIONS: _ignored, ...inherited } = process.env;
  const child = spawn(process.execPath, [...nodeFlags, bin, 'serve'], { cwd: root, env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const role = env.SERVE_ROLE ?? 'all';
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n')) if (line.trim()) lines.push(role === 'all' ? line : `${role}: ${line}`);
    if (lines.length > 200) lines.splice(0, lines.length - 200);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  let exitReason: string | null = null;
  let stopping: Promise<void> | null = null;
  const exited = new Promise<void>((resolve) =>
    child.on('exit', (code, signal) => {
      exitReason = String(code ?? signal);
      // not asked to stop: say so at once, with its last words (a phase would only see refused connections)
      if (stopping === null) progress(`the ${role} process exited by itself with ${exitReason}; last lines:\n${lines.slice(-20).join('\n')}`);
      resolve();
    }),
  );
  const stopNow = async () => {
    if (exitReason !== null) return;
    child.kill('SIGTERM');
    const timedOut = await Promise.race([exited.then(() => false), sleep(60_000).then(() => true)]);
    if (timedOut) {
      progress(`the ${role} process did not stop within 60 s of SIGTERM: killing it`);
      child.kill('SIGKILL');
      await exited;
    }
    if (exitReason !== '0') progress(`the ${role} process exited with ${exitReason}; last lines:\n${lines.slice(-10).join('\n')}`);
  };
  return { pid: child.pid!, exitReason: () => exitReason, stop: () => (stopping ??= stopNow()) };
};

/**
 * Boots the service on a fresh DATA_DIR (or `existingDataDir`, left in place) with the devnet on
 * (development mode), fast blocks and a rate limit the load cannot reach, with the node flags of
 * `npm start` (an `api` process: of `npm run start:api`): one `ledgergate serve` process per
 * SERVE_ROLE that BENCH_SERVICE_PROCESSES names (serviceLayout): a background one first, which
 * starts the embedded PostgreSQL, then the others side by side, which adopt it.
 * BENCH_SERVICE_NODE_OPTIONS are more node flags put before the script (e.g. --cpu-prof, which
 * NODE_OPTIONS does not accept). Teardown: SIGTERM, the API first, wait for the exits (the last
 * stops the embedded PostgreSQL itself), then remove the directory.
 */
/** the devnet's block time the bench's service runs with (BENCH_BLOCK_TIME_MS, 200 ms) */
export const benchBlockTimeMs = (): number => Number(process.env.BENCH_BLOCK_TIME_MS ?? '200');

export const startBenchService = async (lifecycle: Lifecycle, progress: (message: string) => void, existingDataDir?: string): Promise<BenchService> => {
  const dataDir = existingDataDir ?? (await benchDataDir(lifecycle));
  const layout = serviceLayout();
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    DEVNET_BLOCK_TIME_MS: String(benchBlockTimeMs()),
    RATE_LIMIT_PER_MINUTE: '1000000000',
  };
  const extraFlags = (process.env.BENCH_SERVICE_NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean);
  const lines: string[] = [];
  const spawnedAt = performance.now();
  const started: { info: ServiceProcessInfo; url: string; serve: ServeProcess }[] = [];
  const stop = async () => {
    for (const { serve } of started) await serve.stop();
  };
  lifecycle.onTeardown('stop the service', stop);
  const withLog = (error: Error) => {
    throw new Error(`${error.message}\n${lines.slice(-20).join('\n')}`);
  };
  // the workers first: the first process starts the embedded PostgreSQL, the next adopts it
  const boot = async (roles: string[]) => {
    const prepared = [];
    for (const role of roles) {
      // an api process as `npm run start:api` runs it (its larger young generation), the others as `npm start`
      prepared.push({ role, port: await freePort(), start: await startCommand(role === 'api' ? 'start:api' : 'start') });
    }
    const booting = prepared.map(({ role, port, start }) => {
      const serve = spawnServe({ ...start.env, ...env, SERVE_ROLE: role, PORT: String(port), HOST: '127.0.0.1' }, [...start.flags, ...extraFlags], lines, progress);
      const url = `http://127.0.0.1:${port}`;
      // the API is stopped first (teardown runs `started` in order): no request lands on a process whose workers are gone
      started.unshift({ info: { role, pid: serve.pid }, url, serve });
      progress(`booting ledgergate${role === 'all' ? '' : ` (${role})`} (DATA_DIR ${dataDir}, pid ${serve.pid})`);
      return waitFor200(url, '/healthz', serve.exitReason, 120_000);
    });
    await Promise.all(booting).catch(withLog);
  };
  // the first starts the embedded PostgreSQL; the others adopt it, booting side by side as an operator would start them
  const [first, ...others] = layoutRoles(layout);
  await boot([first!]);
  if (others.length > 0) await boot(others);
  const healthyAfterMs = performance.now() - spawnedAt;
  const api = started[0]!;
  const urlOf = (part: ServicePart) => started.find(({ info }) => serviceParts(info.role).has(part))!.url;
  const untilReady = async (timeoutMs: number) => {
    await waitFor200(api.url, '/readyz', () => started.map(({ serve }) => serve.exitReason()).find((reason) => reason !== null) ?? null, timeoutMs).catch(withLog);
    return performance.now() - spawnedAt;
  };
  return {
    url: api.url,
    workersUrl: urlOf('chains'),
    projectionsUrl: urlOf('projections'),
    layout,
    processes: started.map(({ info }) => info),
    dataDir,
    env,
    healthyAfterMs,
    untilReady,
    sinceSpawnMs: () => performance.now() - spawnedAt,
    recentLogLines: () => [...lines],
    stop,
  };
};

/** Runs the ledgergate CLI against the service's DATA_DIR (it adopts the running PostgreSQL) to completion. */
export const runCli = (service: Pick<BenchService, 'env'>, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve, reject) => {
    const { NODE_OPTIONS: _ignored, ...inherited } = process.env;
    const child = spawn(process.execPath, [bin, ...args], { cwd: root, env: { ...inherited, ...service.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });

/** VmHWM (peak resident set) of a process, in MiB, from /proc; null where /proc is not there. */
export const peakRssMiB = async (pid: number): Promise<number | null> => {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8').catch(() => null);
  const match = status && /^VmHWM:\s+(\d+)\s+kB/m.exec(status);
  return match ? Number(match[1]) / 1024 : null;
};

/** VmHWM of each of the service's processes, in MiB, by role (null where /proc is not there) */
export const servicePeakRssMiB = async (service: Pick<BenchService, 'processes'>): Promise<Map<ServiceProcessInfo['role'], number | null>> =>
  new Map(await Promise.all(service.processes.map(async ({ role, pid }) => [role, await peakRssMiB(pid)] as const)));

/** one line: each of the service's processes' peak RSS so far */
export const describePeakRss = async (service: Pick<BenchService, 'processes'>): Promise<string> =>
  `peak RSS since the service started: ${[...(await servicePeakRssMiB(service))].map(([role, mib]) => `${role} ${mib === null ? '?' : `${mib.toFixed(0)} MiB`}`).join(', ')}`;
