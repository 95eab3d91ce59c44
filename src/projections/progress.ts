import type { Kysely } from 'kysely';
import type { Database } from '../db/database.js';
import type { EventStore } from '../eventstore/port.js';
import type { Projection } from './projection.js';

export interface ProjectionProgress {
  name: string;
  checkpoint: bigint;
  /** the position of the first event the projection has still to apply; null when it has none */
  nextPending: bigint | null;
}

/**
 * Where each projection stands: its checkpoint, and the first event after it that it takes (its
 * filter's index answers that with one row). A filtered projection's checkpoint stays at the last
 * event it took, so the checkpoint alone would make a quiet projection look behind.
 */
export const projectionProgress = async (db: Kysely<Database>, store: Pick<EventStore, 'readAll'>, projections: readonly Projection[]): Promise<ProjectionProgress[]> => {
  const rows = await db.selectFrom('projection_checkpoints').select(['name', 'position']).execute();
  const checkpoints = new Map(rows.map((row) => [row.name, BigInt(row.position)]));
  return Promise.all(
    projections.map(async ({ name, filter }) => {
      const checkpoint = checkpoints.get(name) ?? 0n;
      const [next] = await store.readAll({ afterPosition: checkpoint, maxCount: 1, filter });
      return { name, checkpoint, nextPending: next?.position ?? null };
    }),
  );
};

/** events of the store from a projection's first pending one to the head (0 when it is caught up) */
export const lagInEvents = (progress: ProjectionProgress, head: bigint): number =>
  progress.nextPending === null ? 0 : Number(head - progress.nextPending + 1n);
