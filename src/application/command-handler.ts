import { timeOrderedId } from '../lib/time-ordered-id.js';
import type { Decider, DomainEvent } from '../domain/decider.js';
import { WrongExpectedRevisionError } from '../eventstore/errors.js';
import type { EventMetadata, EventStore, ExpectedRevision, NewEvent, RecordedEvent } from '../eventstore/port.js';

/**
 * The one command path: load → decide → append with the revision the decision was made on
 * (ARCHITECTURE invariant 2), several streams atomically when a decision spans them (invariant 3).
 * `decideAndAppend` is the only place that appends a decision; `handleCommand` is its form for one
 * stream, and the ledger batcher (ledger-batches.ts) its batched form for the commands of one ledger.
 */

/** Who asks, for the audit trail: stored as event metadata (time is added per decision). */
export type CommandMetadata = Omit<EventMetadata, 'at'>;

export interface CommandServices {
  store: EventStore;
  clock: () => Date;
}

/** Events decided for one stream, on the revision the decision read. */
export interface DecidedAppend {
  stream: string;
  expectedRevision: ExpectedRevision;
  events: DomainEvent[];
}

/** Bounded: a conflict is retried this many times at most, each after a short jittered pause. */
export const MAX_DECISION_ATTEMPTS = 25;

/** Contenders that lost a race spread out before deciding again. */
export const pauseAfterConflict = (attempt: number) => new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 * attempt)));

export const toDomainEvent = <Event extends DomainEvent>(event: RecordedEvent): Event => ({ type: event.type, data: event.data }) as Event;

/** Every event says who and how (CONTRACT §9): a command without a person's or a key's credential is the service's own. */
export const toNewEvents = (events: DomainEvent[], metadata: CommandMetadata, at: Date): NewEvent[] => {
  const who = { ...metadata, credential: metadata.credential ?? 'system', username: metadata.username ?? null, at: at.toISOString() };
  return events.map((event) => ({ id: timeOrderedId(), type: event.type, data: event.data, metadata: who }));
};

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

export interface DecisionOptions {
  /** how many times a decision is made at most; 1: a conflict goes to the caller at once (a racing worker won) */
  maxAttempts?: number;
  /** which conflicts are decided again (default: all); the others go to the caller */
  retryWhen?: (conflict: WrongExpectedRevisionError) => boolean;
}

/**
 * Decides and appends atomically. `decide` reads what it needs (on each attempt) and returns the
 * appends, each at the revision it read, and a result. When another writer moved one of those
 * streams first, everything is read and decided again, up to `maxAttempts` times. A DomainError
 * thrown by `decide` is the caller's, and nothing is written.
 */
export const decideAndAppend = async <Result extends object>(
  services: CommandServices,
  metadata: CommandMetadata,
  decide: (now: Date) => Promise<{ appends: DecidedAppend[]; result: Result }>,
  { maxAttempts = MAX_DECISION_ATTEMPTS, retryWhen = () => true }: DecisionOptions = {},
): Promise<Result & { position: bigint | null }> => {
  for (let attempt = 1; ; attempt++) {
    const now = services.clock();
    const { appends, result } = await decide(now);
    const nonEmpty = appends.filter((append) => append.events.length > 0);
    if (nonEmpty.length === 0) return { ...result, position: null };
    try {
      const { position } = await services.store.appendMany(
        nonEmpty.map(({ stream, expectedRevision, events }) => ({ stream, expectedRevision, events: toNewEvents(events, metadata, now) })),
      );
      return { ...result, position };
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError) || !retryWhen(error) || attempt >= maxAttempts) throw error;
      await pauseAfterConflict(attempt);
    }
  }
};

/**
 * One command on one stream through `decideAndAppend`. `alsoAppend` adds appends to other streams,
 * atomically with the decision (a claim, say); a conflict on one of those is not decided again but
 * thrown to the caller.
 */
export const handleCommand = async <Command, Event extends DomainEvent, State>(
  services: CommandServices,
  stream: string,
  decider: Decider<Command, Event, State>,
  command: Command,
  metadata: CommandMetadata,
  alsoAppend: (now: Date) => DecidedAppend[] = () => [],
): Promise<{ state: State; events: Event[]; position: bigint | null }> =>
  decideAndAppend(
    services,
    metadata,
    async (now) => {
      const { state, expectedRevision } = await loadAggregate(services.store, stream, decider);
      const events = decider.decide(command, state, { now });
      if (events.length === 0) return { appends: [], result: { state, events } };
      return { appends: [...alsoAppend(now), { stream, expectedRevision, events }], result: { state: events.reduce(decider.evolve, state), events } };
    },
    { retryWhen: (conflict) => conflict.stream === stream },
  );

/**
 * A worker's step through `decideAndAppend`: decided on the state the worker already loaded and
 * appended at that revision, once. A conflict means another worker moved the stream first; it goes
 * to the caller, which reads again on its next pass. Returns the events appended (none: nothing to do).
 */
export const decideOnLoaded = async <Command, Event extends DomainEvent, State>(
  services: CommandServices,
  stream: string,
  decider: Pick<Decider<Command, Event, State>, 'decide'>,
  loaded: { state: State; expectedRevision: ExpectedRevision },
  command: Command,
  metadata: CommandMetadata,
): Promise<Event[]> => {
  const { events } = await decideAndAppend(
    services,
    metadata,
    async (now) => {
      const events = decider.decide(command, loaded.state, { now });
      return { appends: [{ stream, expectedRevision: loaded.expectedRevision, events }], result: { events } };
    },
    { maxAttempts: 1 },
  );
  return events;
};
