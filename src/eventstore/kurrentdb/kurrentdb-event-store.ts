/**
 * The event store port on KurrentDB / EventStoreDB (@kurrent/kurrentdb-client, gRPC).
 *
 * - Revisions are KurrentDB stream revisions; positions are commit positions in the transaction log
 *   (for events appended by this adapter, commit == prepare position, so one bigint identifies an event).
 * - `$all` is shared by everything on the server: reads and subscriptions skip system events
 *   (type or stream starting with `$`).
 * - `appendMany` is one `multiStreamAppend` (KurrentDB >= 25.1): all streams or none. A checked
 *   stream (one given no events) is read just before it, not within it: a change committed between
 *   that read and the append is not seen (PostgreSQL checks it in the append's own transaction).
 * - AppendResult.position is read back from the stream (the event at the returned revision), so it is
 *   exactly the position readAll/subscribeToAll report for that event; the position the server returns
 *   with the append is only the fallback.
 */
import {
  BACKWARDS,
  END,
  FORWARDS,
  KurrentDBClient,
  START,
  type AllStreamResolvedEvent,
  type ReadAllOptions as ClientReadAllOptions,
  type ReadRevision,
  type ResolvedEvent,
} from '@kurrent/kurrentdb-client';
import { EventStoreUnavailableError, WrongExpectedRevisionError } from '../errors.js';
import { validateAppends } from '../validate-append.js';
import {
  checkedRevision,
  type AppendResult,
  type EventStore,
  type ExpectedRevision,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type ScannedRead,
  type StreamAppend,
  type SubscribeOptions,
  type Subscription,
} from '../port.js';
import {
  isStreamNotFound,
  matchesFilter,
  normalizeConnectionString,
  positionOf,
  revisionOf,
  toEventData,
  toPortError,
  toReadPosition,
  toRecordedEvent,
  toServerFilter,
  toStreamState,
} from './mapping.js';
import { collect, findHeadPosition, readAllForwards } from './read-all.js';
import { createBatchingSubscription } from './subscription.js';

const DEFAULT_MAX_BATCH_SIZE = 500;
const GATHER_MS = 5;
const PING_TIMEOUT_MS = 5000;

const withTimeout = <T>(promise: Promise<T>, ms: number): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });

export const createKurrentDbEventStore = (connectionString: string): EventStore => {
  let client: KurrentDBClient;
  try {
    client = KurrentDBClient.connectionString(normalizeConnectionString(connectionString));
  } catch (error) {
    throw new EventStoreUnavailableError('invalid KurrentDB connection string', { cause: error });
  }
  return createKurrentDbEventStoreOnClient(client);
};

/** The store on a given client (which it owns: close() disposes it). */
export const createKurrentDbEventStoreOnClient = (client: KurrentDBClient): EventStore => {
  const subscriptions = new Set<Subscription>();
  let closed = false;

  const ensureOpen = (): void => {
    if (closed) throw new EventStoreUnavailableError('the KurrentDB event store is closed');
  };

  /** Raw stream read; an unknown stream reads as []. */
  const readStreamRaw = async (
    stream: string,
    options: { direction: typeof FORWARDS | typeof BACKWARDS; fromRevision: ReadRevision; maxCount?: number },
  ): Promise<ResolvedEvent[]> => {
    try {
      return await collect(client.readStream(stream, options));
    } catch (error) {
      if (isStreamNotFound(error)) return [];
      throw toPortError(error, { operation: `read of ${stream}` });
    }
  };

  const readAllRaw = async (options: ClientReadAllOptions): Promise<AllStreamResolvedEvent[]> => {
    try {
      return await collect(client.readAll(options));
    } catch (error) {
      throw toPortError(error, { operation: 'read of $all' });
    }
  };

  /** The commit position of the event at `revision` in `stream`, read back; undefined if not reported. */
  const positionAt = async (stream: string, revision: bigint): Promise<bigint | undefined> => {
    try {
      const [resolved] = await readStreamRaw(stream, { direction: FORWARDS, fromRevision: revision, maxCount: 1 });
      return resolved && revisionOf(resolved) === revision ? positionOf(resolved) : undefined;
    } catch {
      return undefined;
    }
  };

  const streamRevision = async (stream: string): Promise<bigint | null> => {
    ensureOpen();
    const [last] = await readStreamRaw(stream, { direction: BACKWARDS, fromRevision: END, maxCount: 1 });
    return (last && revisionOf(last)) ?? null;
  };

  const append = async (stream: string, expectedRevision: ExpectedRevision, events: NewEvent[]): Promise<AppendResult> => {
    ensureOpen();
    validateAppends([{ stream, expectedRevision, events }]);
    const streamState = toStreamState(expectedRevision);
    let result;
    try {
      result = await client.appendToStream(stream, events.map(toEventData), { streamState });
    } catch (error) {
      throw toPortError(error, { operation: `append to ${stream}`, expected: new Map([[stream, expectedRevision]]) });
    }
    if (!result.success) {
      // only when the connection string sets throwOnAppendFailure=false
      const actual = result.nextExpectedRevision;
      throw new WrongExpectedRevisionError(stream, expectedRevision, actual < 0n ? null : actual);
    }
    const revision = result.nextExpectedRevision;
    const position = (await positionAt(stream, revision)) ?? result.position?.commit;
    if (position === undefined) throw new EventStoreUnavailableError(`KurrentDB did not report the position of the append to ${stream}`);
    return { streams: [{ stream, revision }], position };
  };

  /** the checks of an append (streams given no events), read before it is written */
  const checkRevisions = async (checks: StreamAppend[]) => {
    const actual = await Promise.all(checks.map(({ stream }) => streamRevision(stream)));
    checks.forEach(({ stream, expectedRevision }, index) => {
      if ((actual[index] ?? -1n) !== checkedRevision(expectedRevision)) throw new WrongExpectedRevisionError(stream, expectedRevision, actual[index] ?? null);
    });
  };

  const appendMany = async (given: StreamAppend[]): Promise<AppendResult> => {
    ensureOpen();
    validateAppends(given);
    const checks = given.filter(({ events }) => events.length === 0);
    if (checks.length > 0) {
      await checkRevisions(checks);
      const written = await appendMany(given.filter(({ events }) => events.length > 0));
      const revisions = new Map(written.streams.map(({ stream, revision }) => [stream, revision]));
      return { position: written.position, streams: given.map(({ stream, expectedRevision }) => ({ stream, revision: revisions.get(stream) ?? checkedRevision(expectedRevision) })) };
    }
    const appends = given;
    const [single] = appends;
    if (appends.length === 1 && single) return append(single.stream, single.expectedRevision, single.events);
    const expected = new Map(appends.map((a) => [a.stream, a.expectedRevision] as const));
    const requests = appends.map((a) => ({
      streamName: a.stream,
      expectedState: toStreamState(a.expectedRevision),
      events: a.events.map(toEventData),
    }));
    let result;
    try {
      result = await client.multiStreamAppend(requests);
    } catch (error) {
      throw toPortError(error, { operation: `multi-stream append to ${appends.map((a) => a.stream).join(', ')}`, expected });
    }
    const reported = new Map(result.responses.map((r) => [r.streamName, r.revision] as const));
    const streams = await Promise.all(
      appends.map(async ({ stream }) => {
        const revision = reported.get(stream) ?? (await streamRevision(stream));
        if (revision === null) throw new EventStoreUnavailableError(`KurrentDB did not report the revision of ${stream}`);
        return { stream, revision };
      }),
    );
    // The records of one multi-stream append are written in request order, so the last one is the
    // newest; read back every stream's last event anyway and take the highest position.
    const positions = await Promise.all(streams.map(({ stream, revision }) => positionAt(stream, revision)));
    const known = positions.filter((p): p is bigint => p !== undefined);
    const position = known.length === streams.length ? known.reduce((a, b) => (b > a ? b : a)) : result.position;
    return { streams, position };
  };

  const readStream = async (stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> => {
    ensureOpen();
    const direction = options.direction === 'backwards' ? BACKWARDS : FORWARDS;
    const maxCount = options.maxCount === undefined ? undefined : Math.floor(options.maxCount);
    if (maxCount !== undefined && maxCount <= 0) return [];
    let fromRevision: ReadRevision = direction === FORWARDS ? START : END;
    if (options.fromRevision !== undefined) {
      if (options.fromRevision < 0n) {
        if (direction === BACKWARDS) return [];
      } else {
        fromRevision = options.fromRevision;
      }
    }
    const resolved = await readStreamRaw(stream, { direction, fromRevision, maxCount });
    return resolved.map(toRecordedEvent).filter((e): e is RecordedEvent => e !== undefined);
  };

  const readAllScanned = async (options: ReadAllOptions = {}): Promise<ScannedRead> => {
    ensureOpen();
    return readAllForwards(readAllRaw, options);
  };

  const readAll = async (options: ReadAllOptions = {}): Promise<RecordedEvent[]> => (await readAllScanned(options)).events;

  const headPosition = async (): Promise<bigint> => {
    ensureOpen();
    return findHeadPosition(readAllRaw);
  };

  const subscribeToAll = (options: SubscribeOptions = {}): Subscription => {
    ensureOpen();
    const after = options.afterPosition;
    const source = client.subscribeToAll({
      fromPosition: after !== undefined && after > 0n ? toReadPosition(after) : START,
      filter: toServerFilter(options.filter),
    });
    const subscription = createBatchingSubscription({
      source,
      afterPosition: after,
      accept: matchesFilter(options.filter),
      maxBatchSize: Math.max(1, Math.floor(options.maxBatchSize ?? DEFAULT_MAX_BATCH_SIZE)),
      gatherMs: GATHER_MS,
      onClose: () => subscriptions.delete(subscription),
    });
    subscriptions.add(subscription);
    return subscription;
  };

  const ping = async (): Promise<boolean> => {
    if (closed) return false;
    try {
      await withTimeout(collect(client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1 })), PING_TIMEOUT_MS);
      return true;
    } catch {
      return false;
    }
  };

  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await Promise.allSettled([...subscriptions].map((s) => s.close()));
    await client.dispose();
  };

  /** KurrentDB reads one stream at a time: one read each, side by side */
  const streamRevisions = (streams: readonly string[]) => Promise.all(streams.map(streamRevision));

  // its reads carry every event whole: the bodies are the events as read
  return { append, appendMany, readStream, streamRevision, streamRevisions, readAll, readAllScanned, readAllBodies: readAll, headPosition, subscribeToAll, ping, close };
};
