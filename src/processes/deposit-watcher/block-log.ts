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

/**
 * The longest a move past blocks that paid nobody stays in memory before it is written: a watcher
 * that dies meanwhile scans those blocks again from the table's cursor, which records nothing.
 */
export const UNSAVED_MOVES_MS = 1_000;

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
  /**
   * Moves past blocks that paid nobody, not written yet (scannedUnsaved), oldest first, and since
   * when (Date.now()): the table's cursor is at the first of them.
   */
  private unsaved: { blocks: ScannedBlock[]; sinceMs: number } | null = null;

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

  /** the remembered blocks, newest first (the moves held in memory written first) */
  async recentBlocks(now: Date): Promise<ScannedBlock[]> {
    await this.save(now);
    const rows = await this.db.selectFrom('chain_watcher_blocks').select(['number', 'hash']).where('chain_id', '=', this.chainId).orderBy('number', 'desc').execute();
    return rows.map((row) => ({ number: Number(row.number), hash: row.hash }));
  }

  /** read from the table next time: another watcher may have worked the chain (this one took its lock again, or a step failed) */
  forget(): void {
    this.known = null;
    this.unsaved = null;
  }

  async hashOf(number: number): Promise<string | null> {
    if (this.known && this.known.previousHash !== null && number === this.known.next - 1) return this.known.previousHash;
    const row = await this.db.selectFrom('chain_watcher_blocks').select('hash').where('chain_id', '=', this.chainId).where('number', '=', String(number)).executeTakeFirst();
    return row?.hash ?? null;
  }

  /**
   * Block `block.number` (the cursor) is scanned: move past it, remember its hash and forget the
   * oldest one, in ONE statement (atomic like a transaction, one round trip instead of five): the
   * hashes change only if the cursor moved from where this watcher left it. Moves held in memory
   * (scannedUnsaved) are written with it.
   */
  scanned(block: ScannedBlock, now: Date): Promise<void> {
    return this.movePast([...(this.unsaved?.blocks ?? []), block], now);
  }

  /**
   * Block `block.number` (the cursor), which paid nobody, is scanned: the move is held in memory
   * (cursor and hashOf answer it) and written with the next one scanned, or by this call once the
   * oldest held is UNSAVED_MOVES_MS old, or by save(). A watcher that dies first scans those blocks
   * again, which records nothing; a chain mining a block every 200 ms then costs one write a
   * second instead of five.
   */
  async scannedUnsaved(block: ScannedBlock, now: Date): Promise<void> {
    if (this.saveDue) return this.scanned(block, now);
    this.unsaved = { blocks: [...(this.unsaved?.blocks ?? []), block], sinceMs: this.unsaved?.sinceMs ?? Date.now() };
    this.known = { next: block.number + 1, previousHash: block.hash };
  }

  /** writes the moves held in memory, if any */
  async save(now: Date): Promise<void> {
    if (this.unsaved) await this.movePast(this.unsaved.blocks, now);
  }

  /** writes the moves held in memory once the oldest is UNSAVED_MOVES_MS old (a watcher that saw no block since) */
  async saveIfDue(now: Date): Promise<void> {
    if (this.saveDue) await this.save(now);
  }

  /** how long until moves held in memory are due to be written (null: none held) */
  get msUntilSaveDue(): number | null {
    return this.unsaved === null ? null : Math.max(0, this.unsaved.sinceMs + UNSAVED_MOVES_MS - Date.now());
  }

  private get saveDue(): boolean {
    return this.msUntilSaveDue === 0;
  }

  /** the cursor moved past `blocks` (consecutive, from the table's cursor on), the last REMEMBERED_BLOCKS hashes remembered, the oldest forgotten */
  private async movePast(blocks: readonly ScannedBlock[], now: Date): Promise<void> {
    const first = blocks[0]!;
    const last = blocks[blocks.length - 1]!;
    const remembered = blocks.slice(-REMEMBERED_BLOCKS);
    this.known = null;
    this.unsaved = null;
    const { rows } = await sql<{ moved: number }>`
      with moved as (
        update chain_watcher_cursors set next_block = ${last.number + 1}, updated_at = ${now}
         where chain_id = ${this.chainId} and next_block = ${first.number}
        returning chain_id
      ), remembered as (
        insert into chain_watcher_blocks (chain_id, number, hash)
        select chain_id, block.number, block.hash
          from moved, unnest(${remembered.map((scanned) => scanned.number)}::bigint[], ${remembered.map((scanned) => scanned.hash)}::text[]) as block(number, hash)
        on conflict (chain_id, number) do update set hash = excluded.hash
        returning 1
      ), forgotten as (
        delete from chain_watcher_blocks
         where chain_id = ${this.chainId} and number <= ${last.number - REMEMBERED_BLOCKS} and exists (select 1 from moved)
        returning 1
      )
      select count(*)::int as moved from moved
    `.execute(this.db);
    if (rows[0]?.moved !== 1) throw new CursorMovedError(this.chainId, first.number);
    this.known = { next: last.number + 1, previousHash: last.hash };
  }

  /** a reorg: scan again from `nextBlock`, forgetting the abandoned blocks' hashes */
  async rewind(from: number, nextBlock: number, now: Date): Promise<void> {
    await this.save(now);
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
