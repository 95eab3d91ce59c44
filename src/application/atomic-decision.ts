import type { DomainEvent } from '../domain/decider.js';
import { WrongExpectedRevisionError } from '../eventstore/errors.js';
import type { ExpectedRevision } from '../eventstore/port.js';
import { MAX_DECISION_ATTEMPTS, pauseAfterConflict, toNewEvents, type CommandMetadata, type CommandServices } from './command-handler.js';

/** Events decided for one stream, on the revision the decision read. */
export interface DecidedAppend {
  stream: string;
  expectedRevision: ExpectedRevision;
  events: DomainEvent[];
}

/**
 * A decision over several streams (a deposit and its ledger, say), appended atomically
 * (ARCHITECTURE invariant 3), each stream at the revision its part was decided on (invariant 2).
 * `decide` reads what it needs and returns its appends and a result; when any stream moved first,
 * everything is read and decided again, at most MAX_DECISION_ATTEMPTS times. A DomainError
 * thrown by `decide` is the caller's (nothing is written).
 */
export const decideAtomically = async <Result extends object>(
  services: CommandServices,
  metadata: CommandMetadata,
  decide: (now: Date) => Promise<{ appends: DecidedAppend[]; result: Result }>,
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
      if (!(error instanceof WrongExpectedRevisionError) || attempt >= MAX_DECISION_ATTEMPTS) throw error;
      await pauseAfterConflict(attempt);
    }
  }
};
