import { sql, type ColumnType, type Kysely } from 'kysely';
import type { Database } from '../../db/database.js';

/** Tables of migration 20261122T1900-chain-watchers; bigint columns travel as decimal strings. */
interface ChainWatcherCursorsTable {
  chain_id: string;
  next_block: ColumnType<string, number, number>;
  updated_at: ColumnType<Date, Date, Date>;
}

interface ChainWatcherBlocksTable {
  chain_id: string;
  number: ColumnType<string, number, number>;
  hash: string;
}

interface WatcherDatabase {
  chain_watcher_cursors: ChainWatcherCursorsTable;
  chain_watcher_blocks: ChainWatcherBlocksTable;
}

/** How many scanned blocks' hashes a chain keeps: the deepest reorg the watcher can walk back. */
export const REMEMBERED_BLOCKS = 500;

export interface ScannedBlock {
  number: number;
  hash: string;
}

/** Another watcher moved the cursor since this one read it: the step is abandoned and begins again. */
export class CursorMovedError extends Error {
  constructor(chainId: string, expected: number) {
    super(`the cursor of ${chainId} is no longer at block ${expected}`);
    this.name = 'CursorMovedError';
  }
}

/**
 * One chain's progress in PostgreSQL: the next block to scan and the hashes of the blocks scanned
 * last. Every move is a compare-and-set on the cursor, so two watchers that both believe they are
 * active (a lock session lost mid-step) cannot interleave their moves.
 */
export class BlockLog {
  private readonly db: Kysely<WatcherDatabase>;
  /**
   * Where this watcher's own last move left the cursor, and the hash of the block below it (null:
   * not known, a rewind): read back from memory instead of the table while the watcher works the
   * chain. A stale one (another watcher moved the cursor) only makes the next move's
   * compare-and-set fail (CursorMovedError), which forgets it.
   */
  private known: { next: number; previousHash: string | null } | null = null;

  constructor(
    db: Kysely<Database>,
    private readonly chainId: string,
  ) {
    this.db = db as unknown as Kysely<WatcherDatabase>;
  }

  /** the next block to scan; a chain never scanned starts at `startBlock` (its row made by whoever comes first) */
  async cursor(startBlock: number, now: Date): Promise<number> {
    if (this.known) return this.known.next;
    const read = () => this.db.selectFrom('chain_watcher_cursors').select('next_block').where('chain_id', '=', this.chainId).executeTakeFirst();
    const row = await read();
    if (row) return Number(row.next_block);
    await this.db
      .insertInto('chain_watcher_cursors')
      .values({ chain_id: this.chainId, next_block: startBlock, updated_at: now })
      .onConflict((conflict) => conflict.column('chain_id').doNothing())
      .execute();
    const made = await read();
    if (!made) throw new Error(`the watcher cursor of ${this.chainId} is missing after it was made`);
    return Number(made.next_block);
  }

  /** the remembered blocks, newest first */
  async recentBlocks(): Promise<ScannedBlock[]> {
    const rows = await this.db.selectFrom('chain_watcher_blocks').select(['number', 'hash']).where('chain_id', '=', this.chainId).orderBy('number', 'desc').execute();
    return rows.map((row) => ({ number: Number(row.number), hash: row.hash }));
  }

  /** read from the table next time: another watcher may have worked the chain (this one took its lock again, or a step failed) */
  forget(): void {
    this.known = null;
  }

  async hashOf(number: number): Promise<string | null> {
    if (this.known && this.known.previousHash !== null && number === this.known.next - 1) return this.known.previousHash;
    const row = await this.db.selectFrom('chain_watcher_blocks').select('hash').where('chain_id', '=', this.chainId).where('number', '=', String(number)).executeTakeFirst();
    return row?.hash ?? null;
  }

  /**
   * Block `block.number` (the cursor) is scanned: move past it, remember its hash and forget the
   * oldest one, in ONE statement (atomic like a transaction, one round trip instead of five): the
   * hashes change only if the cursor moved from where this watcher left it.
   */
  async scanned(block: ScannedBlock, now: Date): Promise<void> {
    this.known = null;
    const { rows } = await sql<{ moved: number }>`
      with moved as (
        update chain_watcher_cursors set next_block = ${block.number + 1}, updated_at = ${now}
         where chain_id = ${this.chainId} and next_block = ${block.number}
        returning chain_id
      ), remembered as (
        insert into chain_watcher_blocks (chain_id, number, hash)
        select chain_id, ${block.number}, ${block.hash} from moved
        on conflict (chain_id, number) do update set hash = excluded.hash
        returning 1
      ), forgotten as (
        delete from chain_watcher_blocks
         where chain_id = ${this.chainId} and number <= ${block.number - REMEMBERED_BLOCKS} and exists (select 1 from moved)
        returning 1
      )
      select count(*)::int as moved from moved
    `.execute(this.db);
    if (rows[0]?.moved !== 1) throw new CursorMovedError(this.chainId, block.number);
    this.known = { next: block.number + 1, previousHash: block.hash };
  }

  /** a reorg: scan again from `nextBlock`, forgetting the abandoned blocks' hashes */
  async rewind(from: number, nextBlock: number, now: Date): Promise<void> {
    this.known = null;
    await this.db.transaction().execute(async (trx) => {
      await this.move(trx, from, nextBlock, now);
      await trx.deleteFrom('chain_watcher_blocks').where('chain_id', '=', this.chainId).where('number', '>=', String(nextBlock)).execute();
    });
    this.known = { next: nextBlock, previousHash: null };
  }

  private async move(trx: Kysely<WatcherDatabase>, from: number, to: number, now: Date): Promise<void> {
    const moved = await trx
      .updateTable('chain_watcher_cursors')
      .set({ next_block: to, updated_at: now })
      .where('chain_id', '=', this.chainId)
      .where('next_block', '=', String(from))
      .executeTakeFirst();
    if (moved.numUpdatedRows !== 1n) throw new CursorMovedError(this.chainId, from);
  }
}
