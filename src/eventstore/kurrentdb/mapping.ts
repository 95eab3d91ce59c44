/**
 * Pure conversions between the event store port and @kurrent/kurrentdb-client types.
 * No I/O here: the adapter (kurrentdb-event-store.ts) and the subscription use these.
 */
import {
  ANY,
  NO_STREAM,
  STREAM_EXISTS,
  AppendConsistencyViolationError,
  StreamNotFoundError,
  WrongExpectedVersionError,
  eventTypeFilter,
  excludeSystemEvents,
  jsonEvent,
  streamNameFilter,
  type AllStreamResolvedEvent,
  type AppendStreamState,
  type CurrentStreamState,
  type EventData,
  type Filter,
  type Position,
  type ResolvedEvent,
} from '@kurrent/kurrentdb-client';
import {
  DuplicateEventIdError,
  EventStoreUnavailableError,
  InvalidAppendError,
  WrongExpectedRevisionError,
} from '../errors.js';
import {
  matchesEventFilter,
  type EventFilter,
  type EventMetadata,
  type ExpectedRevision,
  type NewEvent,
  type RecordedEvent,
} from '../port.js';

type AnyResolvedEvent = ResolvedEvent | AllStreamResolvedEvent;

/** KurrentDB reports "no position" as 2^64-1 (or -1 through signed paths); such values are not positions. */
const MAX_POSITION = 2n ** 63n;

/** `esdb://` still works in the client but prints a deprecation warning; it means the same as `kurrentdb://`. */
export const normalizeConnectionString = (connectionString: string): string =>
  connectionString.replace(/^esdb(\+discover)?:\/\//i, (_match, discover: string | undefined) => `kurrentdb${discover ?? ''}://`);

export const toStreamState = (expected: ExpectedRevision): AppendStreamState => {
  switch (expected) {
    case 'any':
      return ANY;
    case 'no_stream':
      return NO_STREAM;
    case 'stream_exists':
      return STREAM_EXISTS;
    default:
      if (typeof expected !== 'bigint' || expected < 0n) {
        throw new InvalidAppendError(`invalid expected revision: ${String(expected)}`);
      }
      return expected;
  }
};

/** The port's view of a stream's current state: a revision, or null when it has no events. */
export const toActualRevision = (state: CurrentStreamState | undefined): bigint | null | undefined => {
  if (state === undefined) return undefined;
  if (state === NO_STREAM) return null;
  return state < 0n ? null : state;
};

/**
 * Metadata goes over the wire as a flat object of strings: the v1 append stores it as JSON,
 * and multiStreamAppend (v2 protocol) only accepts string values (it stores them as record properties).
 */
const toWireMetadata = (metadata: EventMetadata): Record<string, string> => {
  const wire: Record<string, string> = {};
  for (const [key, value] of Object.entries(metadata ?? {})) {
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') throw new InvalidAppendError(`metadata.${key} must be a string`);
    if (key.startsWith('$')) throw new InvalidAppendError(`metadata key ${key} is reserved`);
    wire[key] = value;
  }
  return wire;
};

export const toEventData = (event: NewEvent): EventData =>
  jsonEvent({
    id: event.id.toLowerCase(),
    type: event.type,
    data: event.data,
    metadata: toWireMetadata(event.metadata),
  });

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);

/**
 * Events written by multiStreamAppend read back with server-added `$`-prefixed keys (`$schema.*`)
 * merged into the JSON metadata; the port's metadata never has `$` keys, so they are dropped.
 */
const fromWireMetadata = (raw: unknown, recordedAt: Date): EventMetadata => {
  const metadata: Record<string, unknown> = {};
  if (isPlainObject(raw)) {
    for (const [key, value] of Object.entries(raw)) if (!key.startsWith('$')) metadata[key] = value;
  }
  if (typeof metadata.actor !== 'string') metadata.actor = 'unknown';
  if (typeof metadata.at !== 'string') metadata.at = recordedAt.toISOString();
  return metadata as unknown as EventMetadata;
};

/** Positions and revisions as bigint, whatever integer type a client path delivers them in. */
const toBigInt = (value: bigint | number | string | undefined | null): bigint | undefined =>
  value === undefined || value === null ? undefined : BigInt(value);

/** The stream revision of a read event. */
export const revisionOf = (resolved: AnyResolvedEvent): bigint | undefined => toBigInt(resolved.event?.revision);

const validPosition = (value: bigint | undefined): bigint | undefined =>
  value !== undefined && value >= 0n && value < MAX_POSITION ? value : undefined;

/** The event's commit position in the transaction log (for $all reads also on the resolved event). */
export const positionOf = (resolved: AnyResolvedEvent): bigint | undefined =>
  validPosition(toBigInt(resolved.event?.position?.commit)) ?? validPosition(toBigInt(resolved.commitPosition));

/** The full log position of an event, to continue a read from it (commit and prepare). */
export const logPositionOf = (resolved: AnyResolvedEvent): Position | undefined => {
  const commit = validPosition(toBigInt(resolved.event?.position?.commit));
  const prepare = validPosition(toBigInt(resolved.event?.position?.prepare));
  if (commit !== undefined && prepare !== undefined) return { commit, prepare };
  const position = positionOf(resolved);
  return position === undefined ? undefined : { commit: position, prepare: position };
};

/** A position the port handed out (a commit position) as a client read position. */
export const toReadPosition = (position: bigint): Position => ({ commit: position, prepare: position });

export const isSystemEvent = (stream: string, type: string): boolean => stream.startsWith('$') || type.startsWith('$');

/**
 * The port's event. Link events, events without a body and non-JSON (system) events give undefined.
 * `position` is -1n when the server did not report one (stream reads from servers older than 22.6).
 */
export const toRecordedEvent = (resolved: AnyResolvedEvent): RecordedEvent | undefined => {
  const event = resolved.event;
  if (!event || resolved.link) return undefined;
  return {
    id: event.id,
    stream: event.streamId,
    revision: revisionOf(resolved) ?? -1n,
    position: positionOf(resolved) ?? -1n,
    type: event.type,
    data: isPlainObject(event.data) ? event.data : {},
    metadata: fromWireMetadata(event.metadata, event.created),
    recordedAt: event.created,
  };
};

const escapeRegex = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The server-side part of a filter (the server takes one: on stream name or on event type).
 * Categories win (stream-name regex), else types (event-type regex), else "no system event types".
 * The server filter only narrows; `matchesFilter` decides exactly, on the client.
 */
export const toServerFilter = (filter: EventFilter | undefined): Filter => {
  const categories = filter?.categories;
  if (categories && categories.length > 0) return streamNameFilter({ regex: `^(?:${categories.map(escapeRegex).join('|')})(?:-|$)` });
  const types = filter?.types;
  if (types && types.length > 0) return eventTypeFilter({ regex: `^(?:${types.map(escapeRegex).join('|')})$` });
  return excludeSystemEvents();
};

/** Exact filter, as the PostgreSQL adapter applies it (matchesEventFilter), and no system events. */
export const matchesFilter = (filter: EventFilter | undefined) => {
  const matches = matchesEventFilter(filter);
  return (event: RecordedEvent): boolean => !isSystemEvent(event.stream, event.type) && matches(event);
};

const errorType = (error: unknown): string | undefined =>
  typeof error === 'object' && error !== null && typeof (error as { type?: unknown }).type === 'string'
    ? (error as { type: string }).type
    : undefined;

export const isStreamNotFound = (error: unknown): boolean =>
  error instanceof StreamNotFoundError || errorType(error) === 'stream-not-found';

export interface ErrorContext {
  /** what was being done, for the message */
  operation: string;
  /** the expected revision per stream of the append that failed */
  expected?: ReadonlyMap<string, ExpectedRevision>;
}

const isPortError = (error: unknown): error is Error =>
  error instanceof WrongExpectedRevisionError ||
  error instanceof InvalidAppendError ||
  error instanceof DuplicateEventIdError ||
  error instanceof EventStoreUnavailableError;

/**
 * Every client failure as a port error: a wrong expected version (v1 append or v2 multi-stream append)
 * becomes WrongExpectedRevisionError; everything else (unavailable, deadline, not leader, unknown, ...)
 * becomes EventStoreUnavailableError with the client error as `cause`.
 */
export const toPortError = (error: unknown, context: ErrorContext): Error => {
  if (isPortError(error)) return error;
  const expectedOf = (stream: string, fallback: ExpectedRevision): ExpectedRevision =>
    context.expected?.get(stream) ?? fallback;
  if (error instanceof WrongExpectedVersionError || errorType(error) === 'wrong-expected-version') {
    const wrong = error as WrongExpectedVersionError;
    const stream = wrong.streamName || [...(context.expected?.keys() ?? [])][0] || 'unknown';
    const reported = wrong.expectedState;
    const fallback: ExpectedRevision = typeof reported === 'bigint' && reported < 0n ? 'any' : (reported ?? 'any');
    return new WrongExpectedRevisionError(stream, expectedOf(stream, fallback), toActualRevision(wrong.actualState));
  }
  if (error instanceof AppendConsistencyViolationError && error.violations.length > 0) {
    const [violation] = error.violations;
    if (violation) {
      return new WrongExpectedRevisionError(
        violation.streamName,
        expectedOf(violation.streamName, violation.expectedState),
        toActualRevision(violation.actualState),
      );
    }
  }
  const message = (error instanceof Error && error.message) || errorType(error) || (error instanceof Error ? error.name : String(error));
  return new EventStoreUnavailableError(`KurrentDB ${context.operation} failed: ${message}`, { cause: error });
};
