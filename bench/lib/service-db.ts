import pg from 'pg';
import { startEmbeddedPostgres } from '../../src/db/embedded-postgres.js';
import { silentLogger } from '../../src/log.js';
import type { Lifecycle } from './lifecycle.js';

/**
 * A read-only view of the running service's own PostgreSQL: the embedded server under its
 * DATA_DIR, adopted (never started, never stopped) through its postmaster.pid and password file.
 * The session is named `ledgergate-bench`, outside the `ledgergate:%` names the service counts
 * before stopping the server, so the bench never keeps the database alive after the service.
 */
export interface ServiceDb {
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]>;
  close(): Promise<void>;
}

export const connectServiceDb = async (lifecycle: Lifecycle, dataDir: string): Promise<ServiceDb> => {
  const embedded = await startEmbeddedPostgres({ dataDir, logger: silentLogger });
  if (embedded.startedHere) throw new Error('the service’s PostgreSQL was not running: the bench must not start one');
  const client = new pg.Client({ ...embedded.connection('ledgergate'), application_name: 'ledgergate-bench' });
  await client.connect();
  await client.query('set default_transaction_read_only = on');
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await client.end();
  };
  lifecycle.onTeardown('disconnect from the service database', close);
  return {
    query: async <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => (await client.query<R>(text, values)).rows,
    close,
  };
};
