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
 * The checkpoint row is locked and compared first, so a batch can never be applied twice, even by
 * two runners that both believe they are active. The lock goes out with the BEGIN, and the
 * checkpoint's update with the COMMIT: a batch costs the handler's statements and two round trips.
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
      const row = opened[0] as { position: string } | undefined;
      if (!row) throw new Error(`projection ${projection.name} has no checkpoint row`);
      const current = BigInt(row.position);
      if (current !== expectedPosition) throw new CheckpointMovedError(projection.name, expectedPosition, current);
      await applyEvents(trx, projection, batch);
    },
    closing: `update projection_checkpoints set position = ${last.position.toString()}, updated_at = now() where name = ${name}`,
  });
  return last.position;
};
