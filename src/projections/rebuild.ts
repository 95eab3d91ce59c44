import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/database.js';
import type { EventStore, EventBody } from '../eventstore/port.js';
import { inParallel } from '../lib/in-parallel.js';
import { lockCheckpoint, readCheckpoint, RESET_CHANNEL } from './checkpoint-row.js';
import { alreadyApplied, applyEvents, liveOutbox, BatchMemory, type Projection } from './projection.js';
import { REBUILD_BATCH, replay, replayShared } from './rebuild-pass.js';
import { createShadowTables, dropShadowTables, swapInShadowTables, type ShadowTable } from './shadow-tables.js';

/** A projection being rebuilt: its session (which holds its shadow tables) and how far they are built. */
interface Rebuilding {
  projection: Projection;
  /** what the projection keeps between its batches in this rebuild */
  memory: BatchMemory;
  session: Kysely<Database>;
  shadows: ShadowTable[];
  /** every event of the projection up to this position is in its shadow tables */
  reached: bigint;
  /** events applied so far */
  events: number;
}

export interface RebuildOptions {
  /**
   * Sessions that hold the shadow tables, at most one per projection (default 1): each takes a
   * connection of the pool for the whole rebuild, and the reads need another.
   */
  sessions?: number;
  /** events per read of the store (default REBUILD_BATCH) */
  batchSize?: number;
  /** after each batch a projection applied: the position reached and its events so far (a CLI shows it) */
  onProgress?: (projection: string, position: bigint, events: number) => void | Promise<void>;
  /** a projection's rebuilt tables are swapped in, and its checkpoint stands at `position` */
  onRebuilt?: (projection: string, position: bigint) => void;
}

/** Takes `count` connections of the pool, each held until `work` settles. */
const withSessions = <T>(db: Kysely<Database>, count: number, work: (sessions: Kysely<Database>[]) => Promise<T>): Promise<T> => {
  const take = (held: Kysely<Database>[]): Promise<T> => (held.length === count ? work(held) : db.connection().execute((session) => take([...held, session])));
  return take([]);
};

/** The projections of each session, in the order given. */
const bySession = (rebuilding: readonly Rebuilding[]): Rebuilding[][] => {
  const groups = new Map<Kysely<Database>, Rebuilding[]>();
  for (const each of rebuilding) groups.set(each.session, [...(groups.get(each.session) ?? []), each]);
  return [...groups.values()];
};

/**
 * Runs `work` for each projection, the projections of one session one after the other and the
 * sessions side by side; a failure is thrown once every session has settled (nothing may still run
 * on a session when its shadow tables are dropped).
 */
const onEachSession = async (rebuilding: readonly Rebuilding[], work: (group: Rebuilding[]) => Promise<void>): Promise<void> => {
  const groups = bySession(rebuilding);
  await inParallel(groups, groups.length, work);
};

const progressOf = (each: Rebuilding, options: RebuildOptions) => async (batch: EventBody[]) => {
  each.events += batch.length;
  await options.onProgress?.(each.projection.name, batch[batch.length - 1]!.position, each.events);
};

/**
 * Builds the shadow tables up to each projection's live checkpoint in ONE read pass for all of
 * them (replayShared), each session a lane of the pass: it commits its projections' share of a read
 * batch in one transaction, at its own pace behind the read; again while a live runner moved on by
 * a batch or more.
 */
const buildSideBySide = async (store: Pick<EventStore, 'readAllBodies'>, rebuilding: readonly Rebuilding[], options: RebuildOptions): Promise<void> => {
  const batchSize = options.batchSize ?? REBUILD_BATCH;
  for (let behind = true; behind; ) {
    const before = rebuilding.map((each) => each.events);
    const live = new Map(await Promise.all(rebuilding.map(async (each) => [each, await readCheckpoint(each.session, each.projection.name)] as const)));
    const lanes = bySession(rebuilding).map((group) => ({
      readers: group.map((each) => ({ filter: each.projection.filter, from: each.reached, to: live.get(each)! })),
      apply: async (eventsOf: EventBody[][]) => {
        const applying = group.map((each, index) => ({ each, events: eventsOf[index]! })).filter(({ events }) => events.length > 0);
        await group[0]!.session.transaction().execute(async (trx) => {
          for (const { each, events } of applying) await applyEvents(trx, each.projection, events, alreadyApplied, each.memory);
        });
        for (const { each, events } of applying) await progressOf(each, options)(events);
      },
    }));
    await replayShared(store, lanes, batchSize);
    for (const each of rebuilding) if (live.get(each)! > each.reached) each.reached = live.get(each)!;
    behind = rebuilding.some((each, index) => each.events - before[index]! >= batchSize);
  }
};

/**
 * ONE short transaction: locks the checkpoint row (the live runner's next batch waits), replays the
 * few events applied live since the side-by-side pass, applies those beyond the checkpoint as the
 * live projection would (their webhooks included), makes the live tables equal to the rebuilt ones
 * and moves the checkpoint. Answers the position the tables stand at.
 */
const swapIn = (store: Pick<EventStore, 'readAllBodies'>, each: Rebuilding, options: RebuildOptions): Promise<bigint> =>
  each.session.transaction().execute(async (trx) => {
    const { projection } = each;
    const progress = progressOf(each, options);
    const live = await lockCheckpoint(trx, projection.name);
    const batchSize = options.batchSize ?? REBUILD_BATCH;
    await replay(
      store,
      projection.filter,
      { from: each.reached, to: live },
      async (batch) => {
        await applyEvents(trx, projection, batch, alreadyApplied, each.memory);
        await progress(batch);
      },
      batchSize,
    );
    const position = await replay(
      store,
      projection.filter,
      { from: live, to: null },
      async (batch) => {
        await applyEvents(trx, projection, batch, liveOutbox, each.memory);
        await progress(batch);
      },
      batchSize,
    );
    await swapInShadowTables(trx, each.shadows);
    await trx
      .updateTable('projection_checkpoints')
      .set({ position: position.toString(), updated_at: new Date(), rebuilt_at: new Date() })
      .where('name', '=', projection.name)
      .execute();
    // a runner idle in its subscription re-reads the checkpoint (it would otherwise wait for the next event)
    await sql`select pg_notify(${RESET_CHANNEL}, ${projection.name})`.execute(trx);
    return position;
  });

/**
 * Rebuilds projections from position 0 while the API keeps serving them, and changes no live row
 * until each one's end. Their tables are built side by side, as temporary copies on the rebuild's
 * sessions (see shadow-tables.ts), from ONE read pass over the store that feeds every projection
 * its own events, in order, in batches each committed on its own, up to each projection's live
 * checkpoint (these events' webhooks are in the outbox already, written with the checkpoint that
 * covered them, so none is written again). Then each projection is swapped in by its own short
 * transaction (swapIn). Readers see the old rows until that commit and the rebuilt ones from then
 * on; the live runner continues from the checkpoint (CheckpointMovedError if it moved). A rebuild
 * that fails before a projection's swap changes nothing of it. Answers each projection's position.
 */
export const rebuildProjections = async (
  db: Kysely<Database>,
  store: Pick<EventStore, 'readAllBodies'>,
  projections: readonly Projection[],
  options: RebuildOptions = {},
): Promise<Map<string, bigint>> => {
  for (const projection of projections) await readCheckpoint(db, projection.name);
  const count = Math.max(1, Math.min(options.sessions ?? 1, projections.length));
  return withSessions(db, count, async (sessions) => {
    const rebuilding: Rebuilding[] = projections.map((projection, index) => ({ projection, memory: new BatchMemory(), session: sessions[index % count]!, shadows: [], reached: 0n, events: 0 }));
    try {
      for (const each of rebuilding) each.shadows = await createShadowTables(each.session, each.projection.tables);
      await buildSideBySide(store, rebuilding, options);
      const positions = new Map<string, bigint>();
      await onEachSession(rebuilding, async (group) => {
        for (const each of group) {
          const position = await swapIn(store, each, options);
          positions.set(each.projection.name, position);
          options.onRebuilt?.(each.projection.name, position);
        }
      });
      return positions;
    } finally {
      for (const each of rebuilding) await dropShadowTables(each.session, each.shadows);
    }
  });
};

/** One projection rebuilt alone (rebuildProjections); answers the position its tables stand at. */
export const rebuildProjection = async (
  db: Kysely<Database>,
  store: Pick<EventStore, 'readAllBodies'>,
  projection: Projection,
  /** after each batch: the position reached and the events applied so far (a CLI shows it) */
  onProgress: (position: bigint, events: number) => void | Promise<void> = () => undefined,
): Promise<bigint> => {
  const positions = await rebuildProjections(db, store, [projection], { onProgress: (_name, position, events) => onProgress(position, events) });
  return positions.get(projection.name)!;
};
