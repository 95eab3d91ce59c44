import type { Kysely } from 'kysely';
import type { Database } from '../db/database.js';
import type { EventStore } from '../eventstore/port.js';
import type { Projection } from './projection.js';
import { projectionProgress } from './progress.js';

export interface Readiness {
  /** notes the store's head now: the position every projection must reach before traffic comes */
  recordStart(): Promise<void>;
  check(): Promise<{ ready: boolean; waitingFor: string[] }>;
}

/**
 * CONTRACT §11: a process is ready once its migrations ran (they run before the service is
 * composed, so that holds for any process that answers) and every projection has applied the
 * events the store held when the process started, whichever process runs it. Once ready, it stays
 * ready: later lag is a metric, not a reason to take the process out of rotation.
 */
export const createReadiness = (db: Kysely<Database>, store: Pick<EventStore, 'headPosition' | 'readAll'>, projections: readonly Projection[]): Readiness => {
  let startPosition: bigint | null = null;
  let ready = false;
  return {
    recordStart: async () => {
      startPosition = await store.headPosition();
    },
    check: async () => {
      if (ready) return { ready, waitingFor: [] };
      if (startPosition === null) return { ready, waitingFor: ['start'] };
      const progress = await projectionProgress(db, store, projections);
      const behind = progress.filter(({ nextPending }) => nextPending !== null && nextPending <= startPosition!).map(({ name }) => `projection ${name}`);
      ready = behind.length === 0;
      return { ready, waitingFor: behind };
    },
  };
};
