import type { ExpectedRevision } from './port.js';

export const describeExpected = (expected: ExpectedRevision): string =>
  typeof expected === 'bigint' ? expected.toString() : expected;

/** The stream was not at the revision the command decided on. Re-read, re-decide, retry. */
export class WrongExpectedRevisionError extends Error {
  constructor(
    readonly stream: string,
    readonly expected: ExpectedRevision,
    /** the stream's current revision, null when it has no events (may be unknown: undefined) */
    readonly actual: bigint | null | undefined,
  ) {
    super(
      `wrong expected revision on ${stream}: expected ${describeExpected(expected)}, actual ${
        actual === undefined ? 'unknown' : actual === null ? 'no_stream' : actual.toString()
      }`,
    );
    this.name = 'WrongExpectedRevisionError';
  }
}

/** An event id is already stored, but not as part of the same append (another stream or other events). */
export class DuplicateEventIdError extends Error {
  constructor(readonly eventId: string) {
    super(`event id ${eventId} is already stored elsewhere`);
    this.name = 'DuplicateEventIdError';
  }
}

/** The request itself is invalid (empty append, a stream named twice, a malformed id). */
export class InvalidAppendError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidAppendError';
  }
}

/** The store could not be reached or answered with an unexpected failure. */
export class EventStoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EventStoreUnavailableError';
  }
}
