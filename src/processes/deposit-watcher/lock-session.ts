import pg from 'pg';
import { applicationName } from '../../db/application-name.js';
import type { PoolTarget } from '../../db/pool.js';
import type { Logger } from '../../log.js';
import { ADVISORY_LOCK_NAMESPACES } from '../../db/advisory-locks.js';

const LOCK_NAMESPACE = ADVISORY_LOCK_NAMESPACES.chainWatchers;

/**
 * One PostgreSQL session holding the advisory locks of the chains this process watches: across
 * processes one watcher per chain is active, the others stand by and take over when the holder
 * stops or dies (its session ends and PostgreSQL drops its locks). One session for all chains, so
 * eleven chains cost one connection.
 */
export class WatcherLockSession {
  private client: pg.Client | null = null;
  private connecting: Promise<pg.Client> | null = null;
  private readonly held = new Set<string>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly database: PoolTarget,
    private readonly logger: Logger,
  ) {}

  /** whether this process now holds the chain's lock (taking it when free) */
  async acquire(chainId: string): Promise<boolean> {
    if (this.held.has(chainId)) return true;
    return this.inTurn(async () => {
      if (this.held.has(chainId)) return true;
      const client = await this.session();
      const { rows } = await client.query<{ locked: boolean }>('select pg_try_advisory_lock($1, hashtext($2)) as locked', [LOCK_NAMESPACE, chainId]);
      if (rows[0]?.locked && this.client === client) this.held.add(chainId);
      return this.held.has(chainId);
    });
  }

  /** false once the session that held it is gone: a step in flight should stop at the next block */
  holds(chainId: string): boolean {
    return this.held.has(chainId);
  }

  async release(chainId: string): Promise<void> {
    if (!this.held.delete(chainId)) return;
    const client = this.client;
    await this.inTurn(async () => {
      await client?.query('select pg_advisory_unlock($1, hashtext($2))', [LOCK_NAMESPACE, chainId]).catch(() => undefined);
    });
  }

  async close(): Promise<void> {
    this.held.clear();
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  /** the session runs one query at a time: the watchers of every chain take turns on it */
  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const turn = this.queue.then(work);
    this.queue = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn;
  }

  private session(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= (async () => {
      const client = new pg.Client({ ...this.database, application_name: applicationName('chain-watchers') });
      // losing the session loses every lock it held
      const lost = (error?: Error) => {
        if (this.client !== client) return;
        this.logger.warn('chain watchers: lock session lost', { error });
        this.client = null;
        this.held.clear();
        void client.end().catch(() => undefined);
      };
      client.on('error', lost);
      client.on('end', () => lost());
      try {
        await client.connect();
        this.client = client;
        return client;
      } finally {
        this.connecting = null;
      }
    })();
    return this.connecting;
  }
}
