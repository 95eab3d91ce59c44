import type pg from 'pg';
import type { Database } from '../db/database.js';
import type { EventWithoutMetadata } from '../eventstore/port.js';
import { sessionTransaction } from '../db/session-transaction.js';
import { applyEvents, liveOutbox, type BatchMemory, type Projection } from './projection.js';

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

/** The code the opening raises when the checkpoint is not where the batch expected it (its message: where it is, or `none`). */
const CHECKPOINT_MOVED = 'LGCKM';

/**
 * Applies one batch: the handler's writes and the new checkpoint commit together or not at all.
 * The checkpoint row is locked and compared first, by the server in the statement that goes out
 * with the BEGIN, so a batch can never be applied twice, even by two runners that both believe
 * they are active; a checkpoint that moved fails that statement, and with it everything after. The
 * handler's first reads go out right behind it; its writes are held back and go out with the
 * checkpoint's update and the COMMIT, without waiting for the compare's answer. A batch whose
 * handler only writes costs one round trip; one whose handler reads once, two. `memory`: what the
 * session's earlier batches of this projection left (BatchMemory); it must be dropped if this
 * batch fails.
 */
export const applyBatch = async (
  session: ProjectionSession,
  projection: Projection,
  batch: EventWithoutMetadata[],
  expectedPosition: bigint,
  memory?: BatchMemory,
): Promise<bigint> => {
  const last = batch[batch.length - 1];
  if (!last) return expectedPosition;
  const name = session.client.escapeLiteral(projection.name);
  try {
    await session.transaction({
      opening: `do $checkpoint$
        declare found_at bigint;
        begin
          select position into found_at from projection_checkpoints where name = ${name} for update;
          if found_at is distinct from ${expectedPosition.toString()} then
            raise exception using errcode = '${CHECKPOINT_MOVED}', message = coalesce(found_at::text, 'none');
          end if;
        end $checkpoint$`,
      work: (trx) => applyEvents(trx, projection, batch, liveOutbox, memory),
      closing: `update projection_checkpoints set position = ${last.position.toString()}, updated_at = now() where name = ${name}`,
    });
  } catch (error) {
    if ((error as { code?: string }).code !== CHECKPOINT_MOVED) throw error;
    const { message } = error as Error;
    if (message === 'none') throw new Error(`projection ${projection.name} has no checkpoint row`);
    throw new CheckpointMovedError(projection.name, expectedPosition, BigInt(message));
  }
  return last.position;
};
