import pg from 'pg';
import type { Logger } from '../log.js';
import { applicationName } from './application-name.js';
import type { PoolTarget } from './pool.js';

/**
 * Every PostgreSQL advisory-lock namespace (the classid of a two-key lock) the service takes, in one
 * place so that no two workers ever share one by accident: the object id inside a namespace is the
 * worker's own (a projection's or a chain's hash).
 */
export const ADVISORY_LOCK_NAMESPACES = {
  /** one active runner per projection */
  projections: 74_717,
  /** one active sweeper per chain */
  sweepers: 74_718,
  /** one active deposit watcher per chain */
  chainWatchers: 74_720,
  /** one active withdrawal processor per chain */
  withdrawalProcessors: 74_721,
  /** one signer at a time per sending wallet (a gas wallet serves sweeps and withdrawals alike) */
  sendingWallets: 74_722,
  /** moving migrations' bookkeeping rows from one set's table to another's (src/db/migrate.ts) */
  migrationMoves: 74_723,
} as const;

/**
 * Runs `work` on a dedicated session that holds the session advisory lock (namespace, key): the lock
 * lasts exactly as long as that session, so a process that dies frees it for a standby at once.
 * Answers false, without running `work`, when another session holds it.
 */
export const withSessionAdvisoryLock = async (
  lock: {
    database: PoolTarget;
    namespace: number;
    key: string;
    applicationName: string;
    logger: Logger;
    /** the session sends queries without waiting for the previous one's answer (pg's pipeline mode) */
    pipeline?: boolean;
  },
  work: (client: pg.Client) => Promise<void>,
): Promise<boolean> => {
  const client = new pg.Client({ ...lock.database, application_name: applicationName(lock.applicationName), pipeline: lock.pipeline ?? false });
  client.on('error', (error) => lock.logger.warn('advisory-lock session lost', { lock: lock.applicationName, error }));
  await client.connect();
  let healthy = true;
  try {
    const { rows } = await client.query<{ locked: boolean }>('select pg_try_advisory_lock($1, hashtext($2)) as locked', [lock.namespace, lock.key]);
    if (!rows[0]?.locked) return false;
    await work(client);
    return true;
  } catch (error) {
    healthy = false;
    throw error;
  } finally {
    // ending the session releases the lock; an unlock first lets a standby take over sooner
    if (healthy) await client.query('select pg_advisory_unlock_all()').catch(() => undefined);
    await client.end().catch(() => undefined);
  }
};
