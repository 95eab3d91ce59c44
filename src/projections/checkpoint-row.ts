import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/database.js';

/** A rebuild notifies this channel with the projection's name when it moved the checkpoint. */
export const RESET_CHANNEL = 'projection_reset';

/** The projection's checkpoint (its row is created at 0 the first time). */
export const readCheckpoint = async (db: Kysely<Database>, name: string): Promise<bigint> => {
  await db.insertInto('projection_checkpoints').values({ name, position: '0' }).onConflict((oc) => oc.column('name').doNothing()).execute();
  const row = await db.selectFrom('projection_checkpoints').select('position').where('name', '=', name).executeTakeFirstOrThrow();
  return BigInt(row.position);
};

/** The checkpoint, its row locked until the transaction ends (a runner's next batch waits). */
export const lockCheckpoint = async (trx: Transaction<Database>, name: string): Promise<bigint> => {
  const row = await trx
    .selectFrom('projection_checkpoints')
    .select('position')
    .where('name', '=', name)
    .forUpdate()
    .executeTakeFirstOrThrow();
  return BigInt(row.position);
};
