import { expect } from 'vitest';
import type { Decider, DomainEvent } from '../../src/domain/decider.js';
import { DomainError } from '../../src/errors.js';

export const NOW = new Date('2026-11-22T10:00:00.000Z');

/** given(events).when(command).then(events) | .thenThrows(code) — for any decider. */
export const specFor =
  <Command, Event extends DomainEvent, State>(decider: Decider<Command, Event, State>) =>
  (given: Event[]) => ({
    when: (command: Command, now: Date = NOW) => {
      const run = () => decider.decide(command, given.reduce(decider.evolve, decider.initialState), { now });
      return {
        then: (expected: Event[]) => expect(run()).toEqual(expected),
        thenThrows: (code: string, details?: Record<string, unknown>) => {
          let thrown: unknown;
          try {
            run();
          } catch (error) {
            thrown = error;
          }
          expect(thrown).toBeInstanceOf(DomainError);
          expect((thrown as DomainError).code).toBe(code);
          if (details) expect((thrown as DomainError).details).toEqual(details);
        },
      };
    },
  });
