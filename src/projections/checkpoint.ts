import type { Kysely } from 'kysely';
import type { Database } from '../db/database.js';
import type { RecordedEvent } from '../eventstore/port.js';
import { lockCheckpoint } from './checkpoint-row.js';
import { applyEvents, type Projection } from './projection.js';

export { readCheckpoint, RESET_CHANNEL } from './checkpoint-row.js';
export { rebuildProjection, rebuildProjections } from './rebuild.js';

/** The checkpoint is not where this runner left it: a rebuild reset it. Start again from it. */
export class CheckpointMovedError extends Error {
  constructor(
    readonly projection: string,
    readonly expected: bigint,
    readonly actual: bigint,
  ) {
    super(`checkpoint of ${projection} moved from ${expected} to ${actual}`);
    this.name = 'CheckpointMovedError';
  }
}

/**
 * Applies one batch: the handler's writes and the new checkpoint commit together or not at all.
 * The checkpoint row is locked and compared first, so a batch can never be applied twice, even by
 * two runners that both believe they are active.
 */
export const applyBatch = async (
  db: Kysely<Database>,
  projection: Projection,
  batch: RecordedEvent[],
  expectedPosition: bigint,
): Promise<bigint> => {
  const last = batch[batch.length - 1];
  if (!last) return expectedPosition;
  await db.transaction().execute(async (trx) => {
    const current = await lockCheckpoint(trx, projection.name);
    if (current !== expectedPosition) throw new CheckpointMovedError(projection.name, expectedPosition, current);
    await applyEvents(trx, projection, batch);
    await trx
      .updateTable('projection_checkpoints')
      .set({ position: last.position.toString(), updated_at: new Date() })
      .where('name', '=', projection.name)
      .execute();
  });
  return last.position;
};
