import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../db/database.js';
import type { EventStore, RecordedEvent } from '../eventstore/port.js';
import { alreadyApplied, applyEvents, liveOutbox, type Projection } from './projection.js';
import { createShadowTables, dropShadowTables, swapInShadowTables } from './shadow-tables.js';

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
const REBUILD_BATCH = 5000;

/**
 * Replays the projection's events after `from`, up to `to` (or the head), through `apply`, reading
 * each batch while the one before it is applied. Answers the position the tables then stand at:
 * `to` when given (every event up to it is applied), else the last event applied (`from` if none).
 */
const replay = async (
  store: Pick<EventStore, 'readAll'>,
  projection: Projection,
  range: { from: bigint; to: bigint | null },
  apply: (batch: RecordedEvent[]) => Promise<void>,
): Promise<bigint> => {
  const read = (afterPosition: bigint) => {
    const reading = store.readAll({ afterPosition, maxCount: REBUILD_BATCH, filter: projection.filter });
    reading.catch(() => undefined); // awaited below; a failure of the batch being applied must not leave it unhandled
    return reading;
  };
  if (range.to !== null && range.to <= range.from) return range.from;
  let position = range.from;
  let next = read(position);
  for (;;) {
    const events = await next;
    const batch = range.to === null ? events : events.filter((event) => event.position <= range.to!);
    const more = events.length === REBUILD_BATCH && batch.length === events.length;
    if (more) next = read(batch[batch.length - 1]!.position);
    if (batch.length > 0) {
      await apply(batch);
      position = batch[batch.length - 1]!.position;
    }
    if (!more) return range.to ?? position;
  }
};

/**
 * Rebuilds a projection from position 0 while the API keeps serving it, and changes no live row
 * until the end. Its tables are built side by side, as temporary copies on one session (see
 * shadow-tables.ts), from batches of events each committed on its own, up to the live checkpoint
 * (these events' webhooks are in the outbox already, written with the checkpoint that covered
 * them, so none is written again). Then ONE short transaction locks the checkpoint row (the live
 * runner's next batch waits), replays the few events applied live meanwhile, applies those beyond
 * the checkpoint as the live projection would (their webhooks included), makes the live tables
 * equal to the rebuilt ones (an unchanged row is not written) and moves the checkpoint. Readers see
 * the old rows until that commit and the rebuilt ones from then on; the live runner continues from
 * the checkpoint (CheckpointMovedError if it moved). Answers the position the tables stand at.
 */
export const rebuildProjection = async (
  db: Kysely<Database>,
  store: Pick<EventStore, 'readAll'>,
  projection: Projection,
  /** after each batch: the position reached and the events applied so far (a CLI shows it) */
  onProgress: (position: bigint, events: number) => void | Promise<void> = () => undefined,
): Promise<bigint> => {
  await readCheckpoint(db, projection.name);
  return db.connection().execute(async (session) => {
    let events = 0;
    const progressAfter = (apply: (batch: RecordedEvent[]) => Promise<void>) => async (batch: RecordedEvent[]) => {
      await apply(batch);
      events += batch.length;
      await onProgress(batch[batch.length - 1]!.position, events);
    };
    const shadows = await createShadowTables(session, projection.tables);
    try {
      let reached = 0n;
      // side by side up to the live checkpoint, again while the live runner moved on by a batch or more
      for (let behind = true; behind; ) {
        const before = events;
        const live = await readCheckpoint(session, projection.name);
        reached = await replay(store, projection, { from: reached, to: live }, progressAfter((batch) => session.transaction().execute((trx) => applyEvents(trx, projection, batch, alreadyApplied))));
        behind = events - before >= REBUILD_BATCH;
      }
      return await session.transaction().execute(async (trx) => {
        const live = await lockCheckpoint(trx, projection.name);
        await replay(store, projection, { from: reached, to: live }, progressAfter((batch) => applyEvents(trx, projection, batch, alreadyApplied)));
        const position = await replay(store, projection, { from: live, to: null }, progressAfter((batch) => applyEvents(trx, projection, batch, liveOutbox)));
        await swapInShadowTables(trx, shadows);
        await trx
          .updateTable('projection_checkpoints')
          .set({ position: position.toString(), updated_at: new Date(), rebuilt_at: new Date() })
          .where('name', '=', projection.name)
          .execute();
        // a runner idle in its subscription re-reads the checkpoint (it would otherwise wait for the next event)
        await sql`select pg_notify(${RESET_CHANNEL}, ${projection.name})`.execute(trx);
        return position;
      });
    } finally {
      await dropShadowTables(session, shadows);
    }
  });
};
