import { sql, type Selectable } from 'kysely';
import type { ChainDefinition } from '../../catalog/chain.js';
import type { BlockHeader } from '../gateway.js';
import { blockHash, genesisParentHash } from './hashes.js';
import type { DevnetDatabase, DevnetDb } from './tables.js';

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

/**
 * The channel on which every move of a devnet chain's head (a block mined, a reorg) is notified,
 * its payload the chain's id, sent by the statement that moves it (so at its commit): the deposit
 * watchers wait on it instead of polling.
 */
export const DEVNET_HEAD_CHANNEL = 'devnet_head';

/** the returned column that notifies DEVNET_HEAD_CHANNEL of the updated devnet_chains row */
export const notifyHeadMoved = sql<null>`pg_notify(${DEVNET_HEAD_CHANNEL}, devnet_chains.chain_id)`.as('head_notified');

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

type ChainRow = Selectable<DevnetDatabase['devnet_chains']>;

const toChainState = (chain: ChainDefinition, row: ChainRow, head: Selectable<DevnetDatabase['devnet_blocks']>): ChainState => ({
  chain,
  head: toHeader(head),
  reorgCount: row.reorg_count,
  syntheticCount: row.synthetic_count,
  fault: row.fault,
  faultRemaining: row.fault_remaining,
});

/** Locks the chain's row (creating the chain at genesis if new: one statement more, once) and reads its state. */
const lockChain = async (trx: DevnetDb, chain: ChainDefinition): Promise<ChainState> => {
  const lockRow = () => trx.selectFrom('devnet_chains').selectAll().where('chain_id', '=', chain.id).forUpdate().executeTakeFirst();
  let row = await lockRow();
  if (!row) {
    await ensureGenesis(trx, chain);
    row = await lockRow();
  }
  if (!row) throw new Error(`the devnet chain ${chain.id} has no row after its genesis`);
  const head = await trx
    .selectFrom('devnet_blocks')
    .selectAll()
    .where('chain_id', '=', chain.id)
    .where('number', '=', row.head_number)
    .executeTakeFirstOrThrow();
  return toChainState(chain, row, head);
};

/**
 * Runs `work` in one transaction holding the locks of those of `chains` no other transaction holds
 * now (a chain being injected into, mined or broadcast to elsewhere is left out, and so is a chain
 * with no row yet): two statements for all of them (the rows locked with SKIP LOCKED, then their
 * heads read), and it never waits on a lock, so a batch of deposits waiting for these chains waits
 * only for `work`, never for this transaction's own wait.
 */
export const withFreeChains = <T>(db: DevnetDb, chains: readonly ChainDefinition[], work: (trx: DevnetDb, states: ReadonlyMap<string, ChainState>) => Promise<T>): Promise<T> =>
  db.transaction().execute(async (trx) => {
    const states = new Map<string, ChainState>();
    if (chains.length === 0) return work(trx, states);
    const rows = await trx
      .selectFrom('devnet_chains')
      .selectAll()
      .where(
        'chain_id',
        'in',
        chains.map((chain) => chain.id),
      )
      .orderBy('chain_id')
      .forUpdate()
      .skipLocked()
      .execute();
    if (rows.length > 0) {
      // read after the locks (a statement of its own sees every head committed before them)
      const heads = await trx
        .selectFrom('devnet_blocks as b')
        .innerJoin('devnet_chains as c', (join) => join.onRef('c.chain_id', '=', 'b.chain_id').onRef('c.head_number', '=', 'b.number'))
        .selectAll('b')
        .where(
          'b.chain_id',
          'in',
          rows.map((row) => row.chain_id),
        )
        .execute();
      const headOf = new Map(heads.map((head) => [head.chain_id, head]));
      for (const row of rows) {
        const chain = chains.find((candidate) => candidate.id === row.chain_id)!;
        states.set(chain.id, toChainState(chain, row, headOf.get(chain.id)!));
      }
    }
    return work(trx, states);
  });

/**
 * The head block, read without the chain's lock in one statement (undefined: the chain has no row
 * yet). A glance: whoever acts on it under the lock looks again.
 */
export const headBlock = (db: DevnetDb, chain: ChainDefinition) =>
  db
    .selectFrom('devnet_chains as c')
    .innerJoin('devnet_blocks as b', (join) => join.onRef('b.chain_id', '=', 'c.chain_id').onRef('b.number', '=', 'c.head_number'))
    .select(['b.number', 'b.hash', 'b.parent_hash', 'b.timestamp'])
    .where('c.chain_id', '=', chain.id)
    .executeTakeFirst();

/** When each chain's head was mined, in one statement without the locks (a chain with no row yet is absent): a glance, as headBlock. */
export const headTimes = async (db: DevnetDb, chainIds: readonly string[]): Promise<Map<string, Date>> => {
  const rows = await db
    .selectFrom('devnet_chains as c')
    .innerJoin('devnet_blocks as b', (join) => join.onRef('b.chain_id', '=', 'c.chain_id').onRef('b.number', '=', 'c.head_number'))
    .select(['c.chain_id', 'b.timestamp'])
    .where('c.chain_id', 'in', chainIds)
    .execute();
  return new Map(rows.map((row) => [row.chain_id, row.timestamp]));
};

/** Takes the next `count` numbers of the chain's own-transaction counter in one statement (inside withLockedChain), in order. */
export const nextSyntheticNumbers = async (trx: DevnetDb, chainId: string, count: number): Promise<number[]> => {
  if (count === 0) return [];
  const row = await trx
    .updateTable('devnet_chains')
    .set((eb) => ({ synthetic_count: eb('synthetic_count', '+', count) }))
    .where('chain_id', '=', chainId)
    .returning('synthetic_count')
    .executeTakeFirstOrThrow();
  return Array.from({ length: count }, (_, offset) => row.synthetic_count - count + 1 + offset);
};

/** Takes the next number of the chain's own-transaction counter (inside withLockedChain). */
export const nextSyntheticNumber = async (trx: DevnetDb, chainId: string): Promise<number> => (await nextSyntheticNumbers(trx, chainId, 1))[0]!;

/** The chain exists with its genesis block (for reads of a chain nobody has touched yet). */
export const ensureChain = (db: DevnetDb, chain: ChainDefinition): Promise<void> => db.transaction().execute((trx) => ensureGenesis(trx, chain));
