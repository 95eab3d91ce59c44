import { randomUUID } from 'node:crypto';
import type { Decider, DomainEvent } from '../domain/decider.js';
import { WrongExpectedRevisionError } from '../eventstore/errors.js';
import type { EventMetadata, EventStore, ExpectedRevision, NewEvent, RecordedEvent, StreamAppend } from '../eventstore/port.js';

/** Who asks, for the audit trail: stored as event metadata (time is added per decision). */
export type CommandMetadata = Omit<EventMetadata, 'at'>;

export interface CommandServices {
  store: EventStore;
  clock: () => Date;
}

/** Bounded: a conflict is retried this many times at most, each after a short jittered pause. */
export const MAX_DECISION_ATTEMPTS = 25;

/** Contenders that lost a race spread out before deciding again. */
export const pauseAfterConflict = (attempt: number) => new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 * attempt)));

export const toDomainEvent = <Event extends DomainEvent>(event: RecordedEvent): Event => ({ type: event.type, data: event.data }) as Event;

export const toNewEvents = (events: DomainEvent[], metadata: CommandMetadata, at: Date): NewEvent[] =>
  events.map((event) => ({ id: randomUUID(), type: event.type, data: event.data, metadata: { ...metadata, at: at.toISOString() } }));

/** Reads a stream and folds it: the state a decision starts from, and the revision it relies on. */
export const loadAggregate = async <Event extends DomainEvent, State>(
  store: EventStore,
  stream: string,
  decider: Pick<Decider<never, Event, State>, 'initialState' | 'evolve'>,
): Promise<{ state: State; expectedRevision: ExpectedRevision }> => {
  const recorded = await store.readStream(stream);
  const state = recorded.map((event) => toDomainEvent<Event>(event)).reduce(decider.evolve, decider.initialState);
  const last = recorded[recorded.length - 1];
  return { state, expectedRevision: last ? last.revision : 'no_stream' };
};

/**
 * Read, decide, append with the revision the decision was made on (ARCHITECTURE invariant 2). When
 * another writer changed the stream first, read again and decide again, a bounded number of times.
 * `alsoAppend` adds appends to other streams, atomically with the decision (a claim, say); a
 * conflict on one of those is not re-decided but thrown to the caller.
 */
export const handleCommand = async <Command, Event extends DomainEvent, State>(
  services: CommandServices,
  stream: string,
  decider: Decider<Command, Event, State>,
  command: Command,
  metadata: CommandMetadata,
  alsoAppend: (now: Date) => StreamAppend[] = () => [],
): Promise<{ state: State; events: Event[]; position: bigint | null }> => {
  for (let attempt = 1; ; attempt++) {
    const { state, expectedRevision } = await loadAggregate(services.store, stream, decider);
    const now = services.clock();
    const events = decider.decide(command, state, { now });
    if (events.length === 0) return { state, events, position: null };
    try {
      const { position } = await services.store.appendMany([
        ...alsoAppend(now),
        { stream, expectedRevision, events: toNewEvents(events, metadata, now) },
      ]);
      return { state: events.reduce(decider.evolve, state), events, position };
    } catch (error) {
      const conflictHere = error instanceof WrongExpectedRevisionError && error.stream === stream;
      if (!conflictHere || attempt >= MAX_DECISION_ATTEMPTS) throw error;
      await pauseAfterConflict(attempt);
    }
  }
};
