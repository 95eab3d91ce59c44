import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../db/database.js';
import type { RecordedEvent } from '../eventstore/port.js';
import type { Projection } from './projection.js';

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
    for (const event of batch) await projection.handle(trx, event);
    await trx
      .updateTable('projection_checkpoints')
      .set({ position: last.position.toString(), updated_at: new Date() })
      .where('name', '=', projection.name)
      .execute();
  });
  return last.position;
};

export const RESET_CHANNEL = 'projection_reset';

/**
 * Empties the projection's tables and moves its checkpoint to 0, in one transaction; an active
 * runner hears of it on RESET_CHANNEL (at commit) and starts over from 0.
 */
export const resetProjection = async (db: Kysely<Database>, projection: Projection): Promise<void> => {
  await readCheckpoint(db, projection.name);
  await db.transaction().execute(async (trx) => {
    await lockCheckpoint(trx, projection.name);
    for (const table of projection.tables) await sql`truncate table ${sql.table(table)}`.execute(trx);
    await trx
      .updateTable('projection_checkpoints')
      .set({ position: '0', updated_at: new Date(), rebuilt_at: new Date() })
      .where('name', '=', projection.name)
      .execute();
    await sql`select pg_notify(${RESET_CHANNEL}, ${projection.name})`.execute(trx);
  });
};
