import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, openSync, closeSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import type { Logger } from '../log.js';
import { applicationName } from './application-name.js';
import { withFileLock } from './file-lock.js';
import { postgresBinaries, initialiseCluster, postgresUserIds, type UserIds } from './postgres-binaries.js';

/**
 * The embedded PostgreSQL server used when DATABASE_URL is unset (CONTRACT §1).
 *
 * It listens on a unix socket only (no TCP port to collide with), runs detached from our
 * process group (Ctrl-C in a terminal reaches us first, so in-flight work can finish before
 * the database stops), and is adopted, not started twice, by a second process on the same
 * DATA_DIR: `postmaster.pid` tells where it listens.
 */
export interface EmbeddedPostgres {
  connection(database: string): pg.ClientConfig;
  /** true when this process started the server (false when it adopted a running one) */
  readonly startedHere: boolean;
  /** true when nothing was stored under DATA_DIR before: this start made a new, empty database */
  readonly created: boolean;
  /** stops the server unless another ledgergate process is still connected to it */
  stop(): Promise<'stopped' | 'left-running'>;
}

export interface EmbeddedPostgresOptions {
  dataDir: string;
  logger: Logger;
  /** extra `-c name=value` server settings (tests turn fsync off) */
  settings?: Record<string, string>;
  startTimeoutMs?: number;
}

const PORT = 5432;
const MAX_SOCKET_PATH = 100;

interface PostmasterStatus {
  pid: number;
  socketDir: string;
  port: number;
  state: string;
}

const readPostmasterPid = async (clusterDir: string): Promise<PostmasterStatus | null> => {
  const text = await fs.readFile(path.join(clusterDir, 'postmaster.pid'), 'utf8').catch(() => null);
  if (text === null) return null;
  const lines = text.split('\n');
  const pid = Number(lines[0]);
  if (!Number.isInteger(pid) || pid <= 0) return null;
  return { pid, port: Number(lines[3]), socketDir: (lines[4] ?? '').trim(), state: (lines[7] ?? '').trim() };
};

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** As root, PostgreSQL runs as `postgres`, which must be able to reach the data directory. */
const reachableByOthers = async (dir: string): Promise<boolean> => {
  for (let current = path.dirname(dir); ; current = path.dirname(current)) {
    const stat = await fs.stat(current).catch(() => null);
    if (stat && (stat.mode & 0o001) === 0) return false;
    if (current === path.dirname(current)) return true;
  }
};

const clusterLocation = async (dataDir: string, ids: UserIds | null): Promise<string> => {
  const inside = path.join(dataDir, 'postgres');
  if (!ids || (await reachableByOthers(inside))) return inside;
  const key = createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
  return path.join('/var/lib/ledgergate', key, 'postgres');
};

const socketLocation = async (clusterDir: string, ids: UserIds | null): Promise<string> => {
  if (`${clusterDir}/.s.PGSQL.${PORT}`.length <= MAX_SOCKET_PATH) return clusterDir;
  const key = createHash('sha256').update(clusterDir).digest('hex').slice(0, 16);
  const dir = path.join('/tmp', `ledgergate-pg-${key}`);
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  if (ids) await fs.chown(dir, ids.uid, ids.gid);
  return dir;
};

const readOrCreatePassword = async (dataDir: string): Promise<string> => {
  const file = path.join(dataDir, 'secrets', 'postgres-password');
  const existing = await fs.readFile(file, 'utf8').catch(() => null);
  if (existing) return existing.trim();
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const password = randomBytes(24).toString('base64url');
  await fs.writeFile(file, password + '\n', { mode: 0o600, flag: 'wx' }).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  return (await fs.readFile(file, 'utf8')).trim();
};

const waitUntilReady = async (clusterDir: string, isRunning: () => boolean, timeoutMs: number): Promise<PostmasterStatus> => {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const status = await readPostmasterPid(clusterDir);
    if (status?.state === 'ready' && isAlive(status.pid)) return status;
    if (!isRunning()) throw new Error('the embedded PostgreSQL server exited during start-up');
    await sleep(50);
  }
  throw new Error(`the embedded PostgreSQL server was not ready within ${timeoutMs} ms`);
};

const ensureDatabase = async (config: pg.ClientConfig, database: string): Promise<void> => {
  const client = new pg.Client({ ...config, database: 'postgres' });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [database]);
    if (found.rowCount === 0) {
      await client.query(`create database ${client.escapeIdentifier(database)}`).catch((error: { code?: string }) => {
        if (error.code !== '42P04') throw error; // created meanwhile by another process
      });
    }
  } finally {
    await client.end();
  }
};

const otherLedgergateSessions = async (config: pg.ClientConfig): Promise<number> => {
  const client = new pg.Client({ ...config, database: 'postgres', application_name: applicationName('stop') });
  await client.connect();
  try {
    const own = `${applicationName('')}%`;
    const result = await client.query<{ count: string }>(
      `select count(*) as count from pg_stat_activity
        where application_name like 'ledgergate:%' and application_name not like $1`,
      [own],
    );
    return Number(result.rows[0]?.count ?? 0);
  } finally {
    await client.end();
  }
};

const stopServer = async (pid: number, timeoutMs: number): Promise<void> => {
  try {
    process.kill(pid, 'SIGINT'); // "fast" shutdown: roll back open transactions, checkpoint, exit
  } catch {
    return;
  }
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) {
      process.kill(pid, 'SIGQUIT');
      return;
    }
    await sleep(25);
  }
};

const startServer = async (
  clusterDir: string,
  socketDir: string,
  options: EmbeddedPostgresOptions,
  ids: UserIds | null,
): Promise<PostmasterStatus> => {
  const { postgres } = await postgresBinaries();
  const logFile = path.join(options.dataDir, 'postgres.log');
  const logFd = openSync(logFile, 'a', 0o600);
  const settings = { listen_addresses: '', unix_socket_directories: socketDir, max_connections: '200', ...options.settings };
  const args = ['-D', clusterDir, '-p', String(PORT), ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
  const child = spawn(postgres, args, {
    detached: true,
    stdio: ['ignore', logFd, logFd],
    ...(ids ?? {}),
    env: { ...process.env, LC_MESSAGES: 'C' },
  });
  closeSync(logFd);
  let running = true;
  child.on('exit', () => (running = false));
  child.unref();
  try {
    return await waitUntilReady(clusterDir, () => running, options.startTimeoutMs ?? 60_000);
  } catch (error) {
    const log = await fs.readFile(logFile, 'utf8').catch(() => '');
    throw new Error(`${(error as Error).message}; last log lines:\n${log.split('\n').slice(-15).join('\n')}`);
  }
};

export const startEmbeddedPostgres = async (options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> => {
  const { dataDir, logger } = options;
  await fs.mkdir(dataDir, { recursive: true });
  const ids = await postgresUserIds();
  const clusterDir = await clusterLocation(dataDir, ids);
  const password = await readOrCreatePassword(dataDir);

  const { status, startedHere, created } = await withFileLock(path.join(dataDir, 'postgres.lock'), async () => {
    const running = await readPostmasterPid(clusterDir);
    if (running && isAlive(running.pid)) {
      logger.info('embedded postgres: adopting the running server', { clusterDir, pid: running.pid });
      const ready = await waitUntilReady(clusterDir, () => isAlive(running.pid), options.startTimeoutMs ?? 60_000);
      return { status: ready, startedHere: false, created: false };
    }
    const created = !existsSync(path.join(clusterDir, 'PG_VERSION'));
    if (created) {
      logger.info('embedded postgres: initialising a new cluster', { clusterDir });
      await fs.rm(clusterDir, { recursive: true, force: true });
      await initialiseCluster({ clusterDir, password, onLog: (line) => logger.debug('initdb', { line }) });
    }
    const socketDir = await socketLocation(clusterDir, ids);
    const started = await startServer(clusterDir, socketDir, options, ids);
    logger.info('embedded postgres: started', { clusterDir, pid: started.pid });
    return { status: started, startedHere: true, created };
  });

  const connection = (database: string): pg.ClientConfig => ({
    host: status.socketDir,
    port: status.port,
    user: 'postgres',
    password,
    database,
  });
  await ensureDatabase(connection('postgres'), 'ledgergate');

  return {
    connection,
    startedHere,
    created,
    stop: async () => {
      if (!isAlive(status.pid)) return 'stopped';
      const others = await otherLedgergateSessions(connection('postgres')).catch(() => 0);
      if (others > 0) {
        logger.info('embedded postgres: left running for other ledgergate processes', { sessions: others });
        return 'left-running';
      }
      await stopServer(status.pid, 30_000);
      logger.info('embedded postgres: stopped', { pid: status.pid });
      return 'stopped';
    },
  };
};
