import type pg from 'pg';
import type { Database } from '../db/database.js';
import type { RecordedEvent } from '../eventstore/port.js';
import { sessionTransaction } from '../db/session-transaction.js';
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

/** The runner's session: its connection, on which a batch is applied in as few round trips as it can. */
export interface ProjectionSession {
  client: pg.Client;
  transaction: ReturnType<typeof sessionTransaction<Database>>;
}

export const projectionSession = (client: pg.Client): ProjectionSession => ({ client, transaction: sessionTransaction<Database>(client) });

/**
 * Applies one batch: the handler's writes and the new checkpoint commit together or not at all.
 * The checkpoint row is locked and compared before the commit, so a batch can never be applied
 * twice, even by two runners that both believe they are active: the lock goes out with the BEGIN,
 * and the handler's first reads right behind it (the server runs them once it holds the lock); the
 * handler's writes are held back and go out with the checkpoint's update and the COMMIT. A batch
 * whose handler reads once costs two round trips.
 */
export const applyBatch = async (
  session: ProjectionSession,
  projection: Projection,
  batch: RecordedEvent[],
  expectedPosition: bigint,
): Promise<bigint> => {
  const last = batch[batch.length - 1];
  if (!last) return expectedPosition;
  const name = session.client.escapeLiteral(projection.name);
  await session.transaction({
    opening: `select position::text as position from projection_checkpoints where name = ${name} for update`,
    work: async (trx, opened) => {
      // the handler settles before anything is decided: nothing it started may run after a rollback
      const [lock, applied] = await Promise.allSettled([opened, applyEvents(trx, projection, batch)]);
      if (lock.status === 'rejected') throw lock.reason;
      const row = lock.value[0] as { position: string } | undefined;
      if (!row) throw new Error(`projection ${projection.name} has no checkpoint row`);
      const current = BigInt(row.position);
      if (current !== expectedPosition) throw new CheckpointMovedError(projection.name, expectedPosition, current);
      if (applied.status === 'rejected') throw applied.reason;
    },
    closing: `update projection_checkpoints set position = ${last.position.toString()}, updated_at = now() where name = ${name}`,
  });
  return last.position;
};
