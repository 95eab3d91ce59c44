import type pg from 'pg';
import type { ChainDefinition } from '../catalog/chain.js';
import { ADVISORY_LOCK_NAMESPACES } from '../db/advisory-locks.js';
import { createPool, type PoolTarget } from '../db/pool.js';

/** lock sessions a process's sending-wallet locks draw on (one per wallet being sent from at a time) */
export const SENDING_WALLET_LOCK_SESSIONS = 4;

/**
 * The sessions that hold the sending wallets' locks: the only signer of one sending wallet, across
 * every process, is the one holding a PostgreSQL advisory lock on (chain, address), taken by a
 * session of this pool of its own and held for the work's duration (a process that dies frees it
 * with its session). The sweeper and the withdrawal processor both pay gas from an organization's
 * gas wallet; under this lease one picks the next nonce, signs, records and sends before the other
 * looks, so two transactions never take one nonce.
 *
 * The lock's session is never one of the pool the work queries on: a lock holder waits on no
 * connection another lock holder occupies, however many hold locks at once (it used to hold a
 * connection of the workers' pool while its work drew on the same pool, and with more lock holders
 * than connections the work stalled until the pool's timeout). Within a process a wallet's lock
 * holders take turns before they ask for a session, so one wallet never takes two sessions.
 */
export class SendingWalletLocks {
  private pool: pg.Pool | null = null;
  /** wallet key → the last turn queued on it in this process */
  private readonly turns = new Map<string, Promise<unknown>>();

  constructor(
    private readonly database: PoolTarget,
    private readonly sessions = SENDING_WALLET_LOCK_SESSIONS,
  ) {}

  /** runs `work` as the only signer of the wallet, across every process sharing the database */
  withWallet<T>(chain: ChainDefinition, address: string, work: () => Promise<T>): Promise<T> {
    const key = `${chain.id}:${chain.family === 'evm' ? address.toLowerCase() : address}`;
    const previous = this.turns.get(key) ?? Promise.resolve();
    const turn = previous.then(
      () => this.locked(key, work),
      () => this.locked(key, work),
    );
    const settled = turn.then(
      () => undefined,
      () => undefined,
    );
    this.turns.set(key, settled);
    void settled.then(() => {
      if (this.turns.get(key) === settled) this.turns.delete(key);
    });
    return turn;
  }

  /** ends the lock sessions (after the workers that take them stopped) */
  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = null;
    await pool?.end().catch(() => undefined);
  }

  private async locked<T>(key: string, work: () => Promise<T>): Promise<T> {
    // no timeout on the wait for a session: the holders' work never waits on this pool, so a session always comes free
    this.pool ??= createPool(this.database, { max: this.sessions, purpose: 'sending-wallet-locks', connectionTimeoutMillis: 0 });
    const session = await this.pool.connect();
    let healthy = false;
    try {
      await session.query('select pg_advisory_lock($1, hashtext($2))', [ADVISORY_LOCK_NAMESPACES.sendingWallets, key]);
      try {
        return await work();
      } finally {
        // a session that cannot unlock is dropped, and its lock with it
        healthy = await session.query('select pg_advisory_unlock($1, hashtext($2))', [ADVISORY_LOCK_NAMESPACES.sendingWallets, key]).then(
          () => true,
          () => false,
        );
      }
    } finally {
      session.release(healthy ? undefined : true);
    }
  }
}
