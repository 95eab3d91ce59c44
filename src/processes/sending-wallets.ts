import { sql, type Kysely } from 'kysely';
import type { ChainDefinition } from '../catalog/chain.js';
import type { Database } from '../db/database.js';
import { ADVISORY_LOCK_NAMESPACES } from '../db/advisory-locks.js';

/**
 * Runs `work` as the only signer of one sending wallet, across every process: a PostgreSQL advisory
 * lock on (chain, address) held by one pooled session for the work's duration (a process that dies
 * frees it with its session). The sweeper and the withdrawal processor both pay gas from an
 * organization's gas wallet; under this lease one picks the next nonce, signs, records and sends
 * before the other looks, so two transactions never take one nonce.
 */
export const withSendingWallet = async <T>(db: Kysely<Database>, chain: ChainDefinition, address: string, work: () => Promise<T>): Promise<T> => {
  const key = `${chain.id}:${chain.family === 'evm' ? address.toLowerCase() : address}`;
  return db.connection().execute(async (session) => {
    await sql`select pg_advisory_lock(${ADVISORY_LOCK_NAMESPACES.sendingWallets}, hashtext(${key}))`.execute(session);
    try {
      return await work();
    } finally {
      await sql`select pg_advisory_unlock(${ADVISORY_LOCK_NAMESPACES.sendingWallets}, hashtext(${key}))`.execute(session);
    }
  });
};
