import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../db/database.js';
import type { EventStore, RecordedEvent } from '../eventstore/port.js';
import { applyEvents, type Projection } from './projection.js';

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

export const readCheckpoint = async (db: Kysely<Database>, name: string): Promise<bigint> => {
  await db.insertInto('projection_checkpoints').values({ name, position: '0' }).onConflict((oc) => oc.column('name').doNothing()).execute();
  const row = await db.selectFrom('projection_checkpoints').select('position').where('name', '=', name).executeTakeFirstOrThrow();
  return BigInt(row.position);
};

const lockCheckpoint = async (trx: Transaction<Database>, name: string): Promise<bigint> => {
  const row = await trx
    .selectFrom('projection_checkpoints')
    .select('position')
    .where('name', '=', name)
    .forUpdate()
    .executeTakeFirstOrThrow();
  return BigInt(row.position);
};

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

export const RESET_CHANNEL = 'projection_reset';

/** Events replayed per read while rebuilding (bounded: the rebuild streams, it never loads the store). */
const REBUILD_BATCH = 1000;

/**
 * Rebuilds a projection from position 0 while the API keeps serving it: in ONE transaction, its
 * rows are deleted, every event is replayed and the checkpoint moves to the last one. Readers keep
 * seeing the old tables until the commit swaps the rebuilt ones in at once (MVCC: a DELETE, unlike
 * a TRUNCATE, blocks no reader), so no request fails or sees a half-built table. The checkpoint row
 * stays locked throughout: the live runner's next batch waits, then finds the checkpoint moved and
 * continues from it. Webhook rows are deduplicated by source event, so nothing is sent again.
 * Answers the position the rebuilt tables stand at.
 */
export const rebuildProjection = async (
  db: Kysely<Database>,
  store: Pick<EventStore, 'readAll'>,
  projection: Projection,
  /** after each batch: the position reached and the events applied so far (a CLI shows it) */
  onProgress: (position: bigint, events: number) => void = () => undefined,
): Promise<bigint> => {
  await readCheckpoint(db, projection.name);
  return db.transaction().execute(async (trx) => {
    await lockCheckpoint(trx, projection.name);
    for (const table of projection.tables) await sql`delete from ${sql.table(table)}`.execute(trx);
    let position = 0n;
    let events = 0;
    for (;;) {
      const batch = await store.readAll({ afterPosition: position, maxCount: REBUILD_BATCH, filter: projection.filter });
      await applyEvents(trx, projection, batch);
      const last = batch[batch.length - 1];
      if (last) position = last.position;
      events += batch.length;
      onProgress(position, events);
      if (batch.length < REBUILD_BATCH) break;
    }
    await trx
      .updateTable('projection_checkpoints')
      .set({ position: position.toString(), updated_at: new Date(), rebuilt_at: new Date() })
      .where('name', '=', projection.name)
      .execute();
    // a runner idle in its subscription re-reads the checkpoint (it would otherwise wait for the next event)
    await sql`select pg_notify(${RESET_CHANNEL}, ${projection.name})`.execute(trx);
    return position;
  });
};
