/** A domain event as deciders produce it: the store adds id, stream, revision, position, metadata. */
export interface DomainEvent<Type extends string = string, Data extends Record<string, unknown> = Record<string, unknown>> {
  type: Type;
  data: Data;
}

/** What a decider may know beyond command and state: injected, so replay is deterministic. */
export interface DecideContext {
  now: Date;
}

export interface Decider<Command, Event extends DomainEvent, State> {
  initialState: State;
  evolve(state: State, event: Event): State;
  decide(command: Command, state: State, context: DecideContext): Event[];
}

export const fold = <Event extends DomainEvent, State>(decider: Pick<Decider<never, Event, State>, 'initialState' | 'evolve'>, events: Event[]) =>
  events.reduce(decider.evolve, decider.initialState);
