import pg from 'pg';
import { applicationName } from './application-name.js';

export type PoolTarget = { connectionString: string } | pg.ClientConfig;

/** A pool whose sessions carry this process's application name (see application-name.ts). */
export const createPool = (target: PoolTarget, options: { max: number; purpose: string; connectionTimeoutMillis?: number }): pg.Pool => {
  const pool = new pg.Pool({
    ...target,
    max: options.max,
    application_name: applicationName(options.purpose),
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: options.connectionTimeoutMillis ?? 10_000,
  });
  // an idle client that loses its connection must not crash the process; the next query reconnects
  pool.on('error', () => undefined);
  return pool;
};
