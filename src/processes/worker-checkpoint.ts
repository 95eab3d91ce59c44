import { sql, type Kysely, type Transaction } from 'kysely';

/**
 * A chain worker's checkpoint: the event-store position its saved state describes, one row per chain
 * in a table of the worker's own (`chain_id`, `position`, `updated_at`). The state beside it is a
 * fold of the events up to that position and nothing else, so saving it never races the worker's
 * work on the chain: a start from the checkpoint reads the events after it and knows exactly what a
 * start from position 0 would.
 */
export interface CheckpointTable {
  /** e.g. `chain_watcher_checkpoints` */
  table: string;
  chainId: string;
}

/** rows written per statement when a checkpoint's changes are many (its first save after a start from 0) */
export const CHECKPOINT_ROWS_PER_STATEMENT = 1000;

/** `rows` in slices of at most CHECKPOINT_ROWS_PER_STATEMENT */
export const inSlices = <T>(rows: readonly T[]): T[][] => {
  const slices: T[][] = [];
  for (let start = 0; start < rows.length; start += CHECKPOINT_ROWS_PER_STATEMENT) slices.push(rows.slice(start, start + CHECKPOINT_ROWS_PER_STATEMENT));
  return slices;
};

/** the position of the chain's checkpoint, or null when none was saved */
export const checkpointPosition = async (db: Kysely<unknown>, { table, chainId }: CheckpointTable): Promise<bigint | null> => {
  const { rows } = await sql<{ position: string }>`select position::text as position from ${sql.table(table)} where chain_id = ${chainId}`.execute(db);
  return rows[0] ? BigInt(rows[0].position) : null;
};

/**
 * Saves a checkpoint at `position` in one transaction: the position is set first, never backwards
 * (its row lock orders the writers of one chain), then `writeChanges` writes what changed since this
 * worker's last save. When the checkpoint is already past `position` (another worker that believed
 * it was active saved it), nothing is written and the answer is false: what this worker would write
 * is there already, since a checkpoint's state holds everything up to its position.
 */
export const saveCheckpoint = async (
  db: Kysely<unknown>,
  checkpoint: CheckpointTable,
  position: bigint,
  now: Date,
  writeChanges: (trx: Transaction<unknown>) => Promise<void>,
): Promise<boolean> =>
  db.transaction().execute(async (trx) => {
    const table = sql.table(checkpoint.table);
    const moved = await sql`insert into ${table} (chain_id, position, updated_at) values (${checkpoint.chainId}, ${position.toString()}, ${now})
      on conflict (chain_id) do update set position = excluded.position, updated_at = excluded.updated_at
      where ${table}.position <= excluded.position`.execute(trx);
    if (moved.numAffectedRows !== 1n) return false;
    await writeChanges(trx);
    return true;
  });
