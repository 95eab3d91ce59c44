import type { ColumnType, Kysely } from 'kysely';
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

  constructor(
    db: Kysely<Database>,
    private readonly chainId: string,
  ) {
    this.db = db as unknown as Kysely<WatcherDatabase>;
  }

  /** the next block to scan; a chain never scanned starts at `startBlock` */
  async cursor(startBlock: number, now: Date): Promise<number> {
    await this.db
      .insertInto('chain_watcher_cursors')
      .values({ chain_id: this.chainId, next_block: startBlock, updated_at: now })
      .onConflict((conflict) => conflict.column('chain_id').doNothing())
      .execute();
    const row = await this.db.selectFrom('chain_watcher_cursors').select('next_block').where('chain_id', '=', this.chainId).executeTakeFirstOrThrow();
    return Number(row.next_block);
  }

  /** the remembered blocks, newest first */
  async recentBlocks(): Promise<ScannedBlock[]> {
    const rows = await this.db.selectFrom('chain_watcher_blocks').select(['number', 'hash']).where('chain_id', '=', this.chainId).orderBy('number', 'desc').execute();
    return rows.map((row) => ({ number: Number(row.number), hash: row.hash }));
  }

  async hashOf(number: number): Promise<string | null> {
    const row = await this.db.selectFrom('chain_watcher_blocks').select('hash').where('chain_id', '=', this.chainId).where('number', '=', String(number)).executeTakeFirst();
    return row?.hash ?? null;
  }

  /** block `block.number` (the cursor) is scanned: remember its hash and move past it */
  async scanned(block: ScannedBlock, now: Date): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await this.move(trx, block.number, block.number + 1, now);
      await trx
        .insertInto('chain_watcher_blocks')
        .values({ chain_id: this.chainId, number: block.number, hash: block.hash })
        .onConflict((conflict) => conflict.columns(['chain_id', 'number']).doUpdateSet({ hash: block.hash }))
        .execute();
      await trx.deleteFrom('chain_watcher_blocks').where('chain_id', '=', this.chainId).where('number', '<=', String(block.number - REMEMBERED_BLOCKS)).execute();
    });
  }

  /** a reorg: scan again from `nextBlock`, forgetting the abandoned blocks' hashes */
  async rewind(from: number, nextBlock: number, now: Date): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await this.move(trx, from, nextBlock, now);
      await trx.deleteFrom('chain_watcher_blocks').where('chain_id', '=', this.chainId).where('number', '>=', String(nextBlock)).execute();
    });
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
