import { Transaction as BitcoinTransaction } from 'bitcoinjs-lib';
import { DomainError } from '../../errors.js';
import type { DecodedTransfer } from '../../catalog/chain.js';
import type { BlockHeader } from '../gateway.js';
import { notifyHeadMoved, type ChainState } from './chain-state.js';
import { blockHash } from './hashes.js';
import { sql } from 'kysely';
import { BlockAccounts } from './block-accounts.js';
import { accountRefusal, admissionRefusal, type MempoolEntry } from './mempool.js';
import { countInTotals } from './totals.js';
import type { DevnetDb } from './tables.js';

/** A block takes at most this many mempool transactions; the rest wait for the next one. */
export const MAX_TRANSACTIONS_PER_BLOCK = 1000;

/** The pending transactions in mempool order, with their transfers and spends. */
const pendingEntries = async (trx: DevnetDb, chainId: string) => {
  const rows = await trx
    .selectFrom('devnet_transactions')
    .selectAll()
    .where('chain_id', '=', chainId)
    .where('status', '=', 'pending')
    .orderBy('seq')
    .limit(MAX_TRANSACTIONS_PER_BLOCK)
    .execute();
  if (rows.length === 0) return [];
  const hashes = rows.map((row) => row.hash);
  const transfers = await trx.selectFrom('devnet_transfers').selectAll().where('chain_id', '=', chainId).where('tx_hash', 'in', hashes).orderBy('position').execute();
  const spends = await trx.selectFrom('devnet_spends').selectAll().where('chain_id', '=', chainId).where('tx_hash', 'in', hashes).execute();
  return rows.map((row) => {
    const entry: MempoolEntry = {
      hash: row.hash,
      kind: row.kind,
      raw: row.raw,
      sender: row.sender,
      nonce: row.nonce,
      fee: BigInt(row.fee),
      error: row.error,
      transfers: transfers
        .filter((transfer) => transfer.tx_hash === row.hash)
        .map(
          (transfer): DecodedTransfer => ({
            index: transfer.transfer_index,
            from: transfer.from_address,
            to: transfer.to_address,
            asset: transfer.asset,
            amount: BigInt(transfer.amount),
            destinationTag: transfer.destination_tag === null ? null : Number(transfer.destination_tag),
          }),
        ),
      spends: spends.filter((spend) => spend.tx_hash === row.hash).map((spend) => ({ txHash: spend.output_tx_hash, index: spend.output_index })),
    };
    return { seq: row.seq, entry };
  });
};

const laterOf = (clockTime: Date, parentTimestamp: string) => {
  const parent = new Date(parentTimestamp);
  return clockTime.getTime() > parent.getTime() ? clockTime : parent;
};

/** What miners take: Bitcoin transactions paying less than `minimumFeeRate` sat/vB (a fee market that rose) stay in the mempool. */
export interface MiningPolicy {
  minimumFeeRate: bigint | null;
}

/** Whether the policy leaves the transaction out of blocks for now: it pays too little, or it spends an output of one left out. */
const leftOut = (entry: MempoolEntry, policy: MiningPolicy, waiting: ReadonlySet<string>): boolean => {
  if (entry.spends.some((spend) => waiting.has(spend.txHash))) return true;
  if (policy.minimumFeeRate === null || entry.kind !== 'signed' || entry.raw === null) return false;
  return entry.fee < BigInt(BitcoinTransaction.fromHex(entry.raw).virtualSize()) * policy.minimumFeeRate;
};

/**
 * Why the block drops each pending transaction it re-checks, in mempool order: each against what
 * precedes it (one a reorg made invalid is dropped); `included` holds the rest. Account chains
 * check against the senders' totals held in memory (BlockAccounts); Bitcoin against its outputs.
 */
const recheck = async (trx: DevnetDb, state: ChainState, pending: Awaited<ReturnType<typeof pendingEntries>>, policy: MiningPolicy) => {
  const { chain } = state;
  const included: MempoolEntry[] = [];
  const dropped: { hash: string; refusal: string }[] = [];
  if (chain.family !== 'bitcoin') {
    const accounts = await BlockAccounts.load(trx, chain.id, pending.map(({ entry }) => entry));
    for (const { entry } of pending) {
      const refusal = entry.kind === 'signed' && entry.sender !== null ? await accountRefusal(chain, { ...entry, sender: entry.sender }, accounts) : null;
      if (refusal) {
        dropped.push({ hash: entry.hash, refusal });
        continue;
      }
      accounts.include(entry);
      included.push(entry);
    }
    return { included, dropped };
  }
  const waiting = new Set<string>();
  for (const { seq, entry } of pending) {
    if (leftOut(entry, policy, waiting)) {
      waiting.add(entry.hash);
      continue;
    }
    // each refusal is written before the next check, which reads the outputs' spenders from the tables
    const refusal = await admissionRefusal(trx, chain, entry, { beforeSeq: seq });
    if (refusal) await dropAll(trx, chain.id, [{ hash: entry.hash, refusal }]);
    else included.push(entry);
  }
  return { included, dropped: [] };
};

/** Marks transactions dropped with their refusals: one statement for all of them. */
const dropAll = async (trx: DevnetDb, chainId: string, dropped: readonly { hash: string; refusal: string }[]) => {
  if (dropped.length === 0) return;
  await sql`
    update devnet_transactions x set status = 'dropped', error = d.refusal
      from unnest(${dropped.map((drop) => drop.hash)}::text[], ${dropped.map((drop) => drop.refusal)}::text[]) as d(hash, refusal)
     where x.chain_id = ${chainId} and x.hash = d.hash`.execute(trx);
};

/**
 * Mines one block on top of the head (inside withLockedChain): the mempool in order, each
 * transaction re-checked against what precedes it (one a reorg made invalid is dropped); a
 * transaction admitted to fail is mined as failed (fee charged, transfers not applied). The
 * confirmed running totals take the block's transactions in the same transaction.
 */
export const mineBlock = async (trx: DevnetDb, state: ChainState, now: Date, policy: MiningPolicy = { minimumFeeRate: null }): Promise<BlockHeader> => {
  const { chain } = state;
  const { included, dropped } = await recheck(trx, state, await pendingEntries(trx, chain.id), policy);
  await dropAll(trx, chain.id, dropped);
  const block = nextBlock(state, now, included.map((entry) => entry.hash));
  const { number } = block;
  await trx.insertInto('devnet_blocks').values(block).execute();
  const failing = included.filter((entry) => entry.error !== null).map((entry) => entry.hash);
  const succeeding = included.filter((entry) => entry.error === null).map((entry) => entry.hash);
  if (succeeding.length > 0) {
    await trx.updateTable('devnet_transactions').set({ status: 'mined', block_number: number }).where('chain_id', '=', chain.id).where('hash', 'in', succeeding).execute();
  }
  if (failing.length > 0) {
    await trx.updateTable('devnet_transactions').set({ status: 'failed', block_number: number }).where('chain_id', '=', chain.id).where('hash', 'in', failing).execute();
  }
  await countInTotals(trx, chain.id, included.map((entry) => entry.hash), 1);
  await trx.updateTable('devnet_chains').set({ head_number: number }).where('chain_id', '=', chain.id).returning(notifyHeadMoved).execute();
  return becomesHead(state, block);
};

type BlockRow = ReturnType<typeof nextBlock>;

/** The chain's state takes a just-mined block as its head; answers that head. */
const becomesHead = (state: ChainState, block: BlockRow): BlockHeader => {
  state.head = { number: block.number, hash: block.hash, parentHash: block.parent_hash, timestamp: block.timestamp.toISOString() };
  return state.head;
};

/** The row of the block mined next on top of the chain's head, holding these transactions. */
const nextBlock = (state: ChainState, now: Date, transactionHashes: readonly string[]) => {
  const number = state.head.number + 1;
  const timestamp = laterOf(now, state.head.timestamp);
  const hash = blockHash(state.chain, { number, parentHash: state.head.hash, timestamp, transactionHashes: [...transactionHashes], salt: state.reorgCount });
  return { chain_id: state.chain.id, number, hash, parent_hash: state.head.hash, timestamp };
};

/**
 * Mines an empty block on each of the chains (inside a transaction holding their locks) whose
 * mempool holds no transaction: one statement finds them, one inserts their blocks and one moves
 * their heads (each move notified), whatever their number, instead of three statements a chain.
 * Returns the chains left alone (something is pending), for mineBlock to mine one by one.
 */
export const mineEmptyBlocks = async (trx: DevnetDb, states: readonly ChainState[], now: Date): Promise<ChainState[]> => {
  if (states.length === 0) return [];
  const { rows } = await sql<{ chain_id: string }>`
    select c.chain_id from unnest(${states.map((state) => state.chain.id)}::text[]) as c(chain_id)
     where not exists (select 1 from devnet_transactions x where x.chain_id = c.chain_id and x.status = 'pending')`.execute(trx);
  const empty = new Set(rows.map((row) => row.chain_id));
  const mined = states.filter((state) => empty.has(state.chain.id)).map((state) => ({ state, block: nextBlock(state, now, []) }));
  if (mined.length > 0) {
    await trx.insertInto('devnet_blocks').values(mined.map(({ block }) => block)).execute();
    await sql`
      update devnet_chains set head_number = moved.number
        from unnest(${mined.map(({ block }) => block.chain_id)}::text[], ${mined.map(({ block }) => block.number)}::bigint[]) as moved(chain_id, number)
       where devnet_chains.chain_id = moved.chain_id
      returning ${notifyHeadMoved}`.execute(trx);
    for (const { state, block } of mined) becomesHead(state, block);
  }
  return states.filter((state) => !empty.has(state.chain.id));
};

/** The deepest reorg the devnet performs. */
export const MAX_REORG_DEPTH = 100;

/**
 * Replaces the last `depth` blocks with empty blocks of the same heights and times but new hashes
 * (inside withLockedChain). Their transactions are dropped, not re-queued: their transfers, fees and
 * outputs stop counting; a re-broadcast puts one back in the mempool.
 */
export const reorganize = async (trx: DevnetDb, state: ChainState, depth: number): Promise<BlockHeader> => {
  const { chain } = state;
  if (!Number.isInteger(depth) || depth < 1 || depth > Math.min(MAX_REORG_DEPTH, state.head.number)) {
    const maximum = Math.min(MAX_REORG_DEPTH, state.head.number);
    throw new DomainError('BAD_REQUEST', `the reorg depth must be between 1 and ${maximum} on ${chain.id} (its head is block ${state.head.number})`, {
      chainId: chain.id,
      depth,
      headBlockNumber: state.head.number,
    });
  }
  const forkPoint = state.head.number - depth;
  // the running totals give back what the replaced blocks' transactions moved, before they are dropped
  const replacedTransactions = await trx.selectFrom('devnet_transactions').select('hash').where('chain_id', '=', chain.id).where('block_number', '>', forkPoint).execute();
  await countInTotals(trx, chain.id, replacedTransactions.map((row) => row.hash), -1);
  await trx
    .updateTable('devnet_transactions')
    .set({ status: 'dropped', block_number: null, error: 'dropped by a reorg' })
    .where('chain_id', '=', chain.id)
    .where('block_number', '>', forkPoint)
    .execute();
  const replaced = await trx.selectFrom('devnet_blocks').selectAll().where('chain_id', '=', chain.id).where('number', '>', forkPoint).orderBy('number').execute();
  await trx.deleteFrom('devnet_blocks').where('chain_id', '=', chain.id).where('number', '>', forkPoint).execute();
  const salt = state.reorgCount + 1;
  const parent = await trx.selectFrom('devnet_blocks').select('hash').where('chain_id', '=', chain.id).where('number', '=', forkPoint).executeTakeFirstOrThrow();
  let parentHash = parent.hash;
  let header = state.head;
  for (const old of replaced) {
    const hash = blockHash(chain, { number: old.number, parentHash, timestamp: old.timestamp, transactionHashes: [], salt });
    await trx.insertInto('devnet_blocks').values({ chain_id: chain.id, number: old.number, hash, parent_hash: parentHash, timestamp: old.timestamp }).execute();
    header = { number: old.number, hash, parentHash, timestamp: old.timestamp.toISOString() };
    parentHash = hash;
  }
  await trx.updateTable('devnet_chains').set({ reorg_count: salt }).where('chain_id', '=', chain.id).returning(notifyHeadMoved).execute();
  state.reorgCount = salt;
  state.head = header;
  return header;
};
