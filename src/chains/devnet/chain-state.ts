import type { ChainDefinition } from '../../catalog/chain.js';
import type { BlockHeader } from '../gateway.js';
import { blockHash, genesisParentHash } from './hashes.js';
import type { DevnetDb } from './tables.js';

/** A chain's head row as a locked transaction sees it. */
export interface ChainState {
  chain: ChainDefinition;
  head: BlockHeader;
  reorgCount: number;
  syntheticCount: number;
  fault: 'broadcast_error' | 'revert' | null;
  faultRemaining: number;
}

/** Genesis blocks carry a fixed time, so that a chain's block 0 has the same hash in every database. */
const GENESIS_TIMESTAMP = new Date('2026-01-01T00:00:00.000Z');

export const toHeader = (row: { number: number; hash: string; parent_hash: string; timestamp: Date }): BlockHeader => ({
  number: row.number,
  hash: row.hash,
  parentHash: row.parent_hash,
  timestamp: row.timestamp.toISOString(),
});

/** The chain's row and block 0, created by whichever caller comes first (the others wait on the row and find it). */
const ensureGenesis = async (trx: DevnetDb, chain: ChainDefinition) => {
  const inserted = await trx
    .insertInto('devnet_chains')
    .values({ chain_id: chain.id, head_number: 0, fault: null })
    .onConflict((conflict) => conflict.column('chain_id').doNothing())
    .returning('chain_id')
    .executeTakeFirst();
  if (!inserted) return;
  const parentHash = genesisParentHash(chain);
  const hash = blockHash(chain, { number: 0, parentHash, timestamp: GENESIS_TIMESTAMP, transactionHashes: [], salt: 0 });
  await trx.insertInto('devnet_blocks').values({ chain_id: chain.id, number: 0, hash, parent_hash: parentHash, timestamp: GENESIS_TIMESTAMP }).execute();
};

/**
 * Runs `work` in one transaction holding the lock on the chain's row: mining, reorgs, deposits,
 * broadcasts and fault changes of one chain happen one at a time across every process sharing the
 * database, so no two blocks are mined at one height and nonces/outputs are admitted once.
 */
export const withLockedChain = <T>(db: DevnetDb, chain: ChainDefinition, work: (trx: DevnetDb, state: ChainState) => Promise<T>): Promise<T> =>
  db.transaction().execute(async (trx) => work(trx, await lockChain(trx, chain)));

/**
 * withLockedChain over several chains in one transaction (a batch of deposits on many chains is
 * all or none). The rows are locked in chain-id order, so two such batches never wait on each
 * other in a circle.
 */
export const withLockedChains = <T>(db: DevnetDb, chains: readonly ChainDefinition[], work: (trx: DevnetDb, states: ReadonlyMap<string, ChainState>) => Promise<T>): Promise<T> =>
  db.transaction().execute(async (trx) => {
    const states = new Map<string, ChainState>();
    for (const chain of [...chains].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) states.set(chain.id, await lockChain(trx, chain));
    return work(trx, states);
  });

/** Locks the chain's row (creating the chain at genesis if new) and reads its state. */
const lockChain = async (trx: DevnetDb, chain: ChainDefinition): Promise<ChainState> => {
  await ensureGenesis(trx, chain);
  const row = await trx.selectFrom('devnet_chains').selectAll().where('chain_id', '=', chain.id).forUpdate().executeTakeFirstOrThrow();
  const head = await trx
    .selectFrom('devnet_blocks')
    .selectAll()
    .where('chain_id', '=', chain.id)
    .where('number', '=', row.head_number)
    .executeTakeFirstOrThrow();
  return {
    chain,
    head: toHeader(head),
    reorgCount: row.reorg_count,
    syntheticCount: row.synthetic_count,
    fault: row.fault,
    faultRemaining: row.fault_remaining,
  };
};

/** Takes the next number of the chain's own-transaction counter (inside withLockedChain). */
export const nextSyntheticNumber = async (trx: DevnetDb, chainId: string): Promise<number> => {
  const row = await trx
    .updateTable('devnet_chains')
    .set((eb) => ({ synthetic_count: eb('synthetic_count', '+', 1) }))
    .where('chain_id', '=', chainId)
    .returning('synthetic_count')
    .executeTakeFirstOrThrow();
  return row.synthetic_count;
};

/** The chain exists with its genesis block (for reads of a chain nobody has touched yet). */
export const ensureChain = (db: DevnetDb, chain: ChainDefinition): Promise<void> => db.transaction().execute((trx) => ensureGenesis(trx, chain));
