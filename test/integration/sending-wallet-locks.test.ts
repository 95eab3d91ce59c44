import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findChain } from '../../src/catalog/registry.js';
import { ADVISORY_LOCK_NAMESPACES } from '../../src/db/advisory-locks.js';
import { createPool } from '../../src/db/pool.js';
import { SendingWalletLocks } from '../../src/processes/sending-wallets.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

const ETHEREUM = findChain('eip155:1')!;
const wallet = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;

/** resolves once `count` parties have arrived: each holder waits here until all are inside their locks at once */
const barrier = (count: number) => {
  let arrived = 0;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return async () => {
    if (++arrived === count) open();
    await opened;
  };
};

describe('sending-wallet locks', () => {
  let database: TestDatabase;
  /** the workers' pool of the test: two connections, fewer than the lock holders below */
  let workers: pg.Pool;

  beforeAll(async () => {
    database = await createTestDatabase('sending_wallet_locks');
    workers = createPool(database.config, { max: 2, purpose: 'test-workers' });
  });
  afterAll(async () => {
    await workers?.end();
    await database?.drop();
  });

  it('more lock holders than the workers pool has connections: every holder is inside its lock at once and its work still gets connections', async () => {
    const holders = 5;
    const locks = new SendingWalletLocks(database.config, holders);
    const allInside = barrier(holders);
    try {
      // each holder queries the workers' pool, waits until every holder holds its lock, then queries again;
      // with the lock on a connection of that pool (the old way) two holders take both connections and the work waits forever
      const done = await Promise.all(
        Array.from({ length: holders }, (_, n) =>
          locks.withWallet(ETHEREUM, wallet(n + 1), async () => {
            await workers.query('select 1');
            await allInside();
            const { rows } = await workers.query<{ n: number }>('select $1::int as n', [n]);
            return rows[0]!.n;
          }),
        ),
      );
      expect(done).toEqual([0, 1, 2, 3, 4]);
    } finally {
      await locks.close();
    }
  });

  it('more lock holders than lock sessions: they take turns on the sessions, and every one completes', async () => {
    const locks = new SendingWalletLocks(database.config, 2);
    try {
      const done = await Promise.all(Array.from({ length: 7 }, (_, n) => locks.withWallet(ETHEREUM, wallet(100 + n), async () => (await workers.query<{ n: number }>('select $1::int as n', [n])).rows[0]!.n)));
      expect(done).toEqual([0, 1, 2, 3, 4, 5, 6]);
    } finally {
      await locks.close();
    }
  });

  it('one wallet, two processes: the second signer starts only once the first is done', async () => {
    // two instances are two processes' lock sessions: the lock is PostgreSQL's, not this process's
    const first = new SendingWalletLocks(database.config);
    const second = new SendingWalletLocks(database.config);
    const steps: string[] = [];
    const address = wallet(7);
    try {
      let secondDone: Promise<void> | null = null;
      await first.withWallet(ETHEREUM, address, async () => {
        steps.push('first in');
        secondDone = second.withWallet(ETHEREUM, address.toUpperCase().replace('0X', '0x'), async () => {
          steps.push('second in');
        });
        // the second's session is queued on the lock in PostgreSQL, behind the first's
        await waitForLockWaiter(workers);
        steps.push('first out');
      });
      await secondDone;
      expect(steps).toEqual(['first in', 'first out', 'second in']);
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('one wallet, one process: its holders take turns, on one session, and a holder that throws lets the next in', async () => {
    const locks = new SendingWalletLocks(database.config, 4);
    const steps: string[] = [];
    const address = wallet(8);
    try {
      const outcomes = await Promise.allSettled(
        [0, 1, 2].map((n) =>
          locks.withWallet(ETHEREUM, address, async () => {
            steps.push(`${n} in`);
            const { rows } = await workers.query<{ sessions: number }>(
              `select count(*)::int as sessions from pg_locks where locktype = 'advisory' and classid = $1 and granted`,
              [ADVISORY_LOCK_NAMESPACES.sendingWallets],
            );
            steps.push(`${n} out, ${rows[0]!.sessions} held`);
            if (n === 1) throw new Error('the work failed');
          }),
        ),
      );
      expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(steps).toEqual(['0 in', '0 out, 1 held', '1 in', '1 out, 1 held', '2 in', '2 out, 1 held']);
      // nothing left locked
      const { rows } = await workers.query<{ held: number }>(`select count(*)::int as held from pg_locks where locktype = 'advisory' and classid = $1`, [ADVISORY_LOCK_NAMESPACES.sendingWallets]);
      expect(rows[0]!.held).toBe(0);
    } finally {
      await locks.close();
    }
  });
});

/** resolves once a session waits for a sending-wallet lock (PostgreSQL's own view of it, no clock) */
const waitForLockWaiter = async (pool: pg.Pool): Promise<void> => {
  for (;;) {
    const { rows } = await pool.query<{ waiting: number }>(`select count(*)::int as waiting from pg_locks where locktype = 'advisory' and classid = $1 and not granted`, [
      ADVISORY_LOCK_NAMESPACES.sendingWallets,
    ]);
    if (rows[0]!.waiting > 0) return;
  }
};
