import type { EventFilter } from '../../src/eventstore/port.js';
import { allProjections } from '../../src/projections/registry.js';
import type { ServiceDb } from './service-db.js';

/**
 * Projection lag as a reader of the read models sees it: every ~20 ms the sampler reads the event
 * store's new events (position and category/type only) and every projection's checkpoint. When
 * the head first shows position p (time t0), each projection owes the last event ≤ p that its
 * filter selects; the lag of p is the time until the slowest of them has its checkpoint there.
 * A projection's checkpoint moves only over the events it selects, so an unrelated projection
 * never counts. Resolution: the sampling interval plus one query.
 */
export interface LagSampler {
  /**
   * Stops reading new positions, keeps reading checkpoints until every position seen is resolved
   * (or `drainMs` passed), and answers the lags (ms) and how many stayed unresolved.
   */
  stop(drainMs: number): Promise<{ lagsMs: number[]; unresolved: number; samples: number; byProjection: Map<string, number[]> }>;
}

interface Owed {
  seenAtMs: number;
  /** projection name → the position its checkpoint must reach */
  targets: Map<string, bigint>;
  /** the projections whose checkpoint has not reached its target yet */
  pending: Set<string>;
}

const selects = (filter: EventFilter | undefined, category: string, type: string) =>
  (!filter?.categories || filter.categories.includes(category)) && (!filter?.types || filter.types.includes(type));

const INTERVAL_MS = 20;
const MAX_EVENTS_PER_READ = 50_000;

export const startLagSampler = async (db: ServiceDb): Promise<LagSampler> => {
  const projections = allProjections().map(({ name, filter }) => ({ name, filter }));
  const [headRow] = await db.query<{ head: string | null }>('select max(position)::text as head from eventstore.events');
  let head = BigInt(headRow?.head ?? '0');
  /** per projection: the last position it selects, as far as the sampler has read */
  const lastSelected = new Map<string, bigint>();
  const owed: Owed[] = [];
  const lagsMs: number[] = [];
  /** per projection: the time until its own checkpoint reached each position's target */
  const byProjection = new Map<string, number[]>(projections.map(({ name }) => [name, []]));
  let samples = 0;
  let accepting = true;
  let deadlineMs = Number.POSITIVE_INFINITY;

  // `order by e.position`, qualified: a bare `position` would name the text column selected here,
  // sorting every event by its text instead of walking the primary key from the head
  const readNewEvents = () =>
    db.query<{ position: string; category: string; type: string }>(
      'select e.position::text as position, e.category, e.type from eventstore.events e where e.position > $1 order by e.position limit $2',
      [head.toString(), MAX_EVENTS_PER_READ],
    );

  const sampleOnce = async () => {
    const events = accepting ? await readNewEvents() : [];
    const seenAtMs = performance.now();
    if (events.length > 0) {
      for (const event of events) {
        const position = BigInt(event.position);
        for (const projection of projections) if (selects(projection.filter, event.category, event.type)) lastSelected.set(projection.name, position);
      }
      head = BigInt(events[events.length - 1]!.position);
      owed.push({ seenAtMs, targets: new Map(lastSelected), pending: new Set(lastSelected.keys()) });
    }
    const checkpoints = await db.query<{ name: string; position: string }>('select name, position::text from projection_checkpoints');
    const checkedAtMs = performance.now();
    const reached = new Map(checkpoints.map((row) => [row.name, BigInt(row.position)]));
    for (const { seenAtMs, targets, pending } of owed) {
      for (const name of pending) {
        if ((reached.get(name) ?? 0n) < targets.get(name)!) continue;
        pending.delete(name);
        byProjection.get(name)?.push(checkedAtMs - seenAtMs);
      }
    }
    // targets only grow with p, so positions resolve in order: stop at the first still owed
    while (owed.length > 0 && owed[0]!.pending.size === 0) lagsMs.push(checkedAtMs - owed.shift()!.seenAtMs);
    samples++;
  };

  const loop = (async () => {
    while (accepting || (owed.length > 0 && performance.now() < deadlineMs)) {
      const started = performance.now();
      await sampleOnce();
      const rest = INTERVAL_MS - (performance.now() - started);
      if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));
    }
  })();

  return {
    stop: async (drainMs) => {
      deadlineMs = performance.now() + drainMs;
      accepting = false;
      await loop;
      return { lagsMs, unresolved: owed.length, samples, byProjection };
    },
  };
};
