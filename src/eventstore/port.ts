/**
 * The event store port. Every adapter (PostgreSQL, KurrentDB) implements exactly this,
 * and one contract suite (test/integration/eventstore.contract.ts) runs against each.
 *
 * Revisions are 0-based per stream (the first event of a stream has revision 0n).
 * Positions are global, strictly increasing in commit order, and never reused.
 */

export type ExpectedRevision = 'any' | 'no_stream' | 'stream_exists' | bigint;

/** Who did what, for audit: carried with every event, never used by deciders' invariants. */
export interface EventMetadata {
  /** user id, `system`, or a component name (`processor:eip155:1`) */
  actor: string;
  /** ISO 8601 UTC time the command was decided (injected, so replay is deterministic) */
  at: string;
  requestId?: string;
  correlationId?: string;
  causationId?: string;
  /** owning organization, for tenant-scoped reads and exports */
  orgId?: string;
  /** how the actor proved who they are: a person's login (`person`), an API key (`api-key`), or the service itself (`system`) */
  credential?: 'person' | 'api-key' | 'system';
  /** the person's login name (the owner's, for an API key); null for the service itself */
  username?: string | null;
}

export interface NewEvent {
  /** a UUID; appending an event id that is already stored (in the same stream) is a no-op */
  id: string;
  type: string;
  data: Record<string, unknown>;
  metadata: EventMetadata;
}

export interface RecordedEvent {
  id: string;
  stream: string;
  revision: bigint;
  position: bigint;
  type: string;
  data: Record<string, unknown>;
  metadata: EventMetadata;
  recordedAt: Date;
}

/**
 * An event without its metadata and recorded time: what a projection reads (its tables are built
 * from the events' types and data, in order), for less than a whole event costs to read and decode.
 */
export type EventBody = Omit<RecordedEvent, 'metadata' | 'recordedAt'>;

/**
 * An event without its metadata: what the projections read as they follow the store (their
 * tables are built from the events' types and data, their lag measured from the recorded time),
 * for less than a whole event costs to read, send and decode.
 */
export type EventWithoutMetadata = Omit<RecordedEvent, 'metadata'>;

/**
 * The option of a scanned read or a subscription that leaves each event's metadata out: its
 * events are EventWithoutMetadata (an adapter may carry the metadata anyway).
 */
export interface WithoutMetadata {
  metadata: false;
}

/**
 * One stream of an append. With no events it is a check: the stream must stand at
 * `expectedRevision` (a revision, or `no_stream`) when the others are written, atomically with
 * them, or the whole append is refused with WrongExpectedRevisionError; nothing is written to it.
 * A decision made on a stream it does not write is checked this way, without a read before it.
 */
export interface StreamAppend {
  stream: string;
  expectedRevision: ExpectedRevision;
  events: NewEvent[];
}

/** the revision a check (a StreamAppend of no events) holds its stream at: -1n for `no_stream` */
export const checkedRevision = (expected: ExpectedRevision): bigint => {
  if (typeof expected === 'bigint') return expected;
  if (expected === 'no_stream') return -1n;
  throw new Error(`a check names a revision or no_stream, not ${expected}`);
};

/** the streams an append writes (its checks left out) */
export const writtenStreams = (appends: readonly StreamAppend[]): string[] => appends.filter(({ events }) => events.length > 0).map(({ stream }) => stream);

export interface AppendResult {
  /** revision of the last event now in each appended stream, in the order given (a checked stream: its checked revision) */
  streams: { stream: string; revision: bigint }[];
  /** global position of the last event written (or already stored, for an idempotent retry) */
  position: bigint;
}

export interface ReadStreamOptions {
  direction?: 'forwards' | 'backwards';
  /** inclusive; default: the start (forwards) or the end (backwards) */
  fromRevision?: bigint;
  maxCount?: number;
}

export interface EventFilter {
  /** stream categories: the part of the stream name before the first '-' */
  categories?: string[];
  types?: string[];
}

export interface ReadAllOptions {
  /** exclusive: events strictly after this position; default: from the start */
  afterPosition?: bigint;
  maxCount?: number;
  filter?: EventFilter;
}

/** A read of all events (or of a filter's) and how far it looked. */
export interface ScannedRead<Event extends EventWithoutMetadata = RecordedEvent> {
  events: Event[];
  /**
   * The read found every event its filter takes after its `afterPosition` up to this position
   * (never before `afterPosition`): the last event's position when the read was full (`maxCount`
   * events); when it was cut short, as far as the adapter saw the log, which for PostgreSQL is the
   * store's head in the read's own snapshot, whatever the filter skipped. A reader that reads on
   * from here misses nothing and walks nothing twice, and a read cut short has seen everything
   * appended before it began.
   */
  scannedTo: bigint;
}

export interface SubscribeOptions {
  afterPosition?: bigint;
  filter?: EventFilter;
  /** upper bound on one delivered batch */
  maxBatchSize?: number;
}

/**
 * A subscription to all events, delivered in global order as batches: catch-up first, then live.
 * It never skips an event and never delivers one twice within a subscription.
 */
export interface Subscription<Event extends EventWithoutMetadata = RecordedEvent> extends AsyncIterable<Event[]> {
  /** ends the iteration; pending `next()` calls resolve with `done` */
  close(): Promise<void>;
}

/** Told which streams were appended, so what a process keeps in memory is dropped when it changes. */
export interface StreamChangeListener {
  /** a stream of a followed category was appended (by this process or another) */
  changed(stream: string): void;
  /** the feed may have missed changes (its session was lost, or is back): drop everything kept */
  reset(): void;
}

/**
 * The streams appended by anyone, as soon as the store learns of them: an append of this process
 * before its promise settles; another process's when the store's notification arrives. Memory may
 * be trusted only while `following()` is true; every gap in following is announced by `reset()`.
 */
export interface StreamChanges {
  following(): boolean;
  /** follows the streams of these categories; returns the way to stop */
  follow(categories: string[], listener: StreamChangeListener): () => void;
}

export interface EventStore {
  /** absent where the adapter cannot tell (KurrentDB here): then nothing is kept in memory */
  readonly changes?: StreamChanges;
  /** atomic append to one stream */
  append(stream: string, expectedRevision: ExpectedRevision, events: NewEvent[]): Promise<AppendResult>;
  /**
   * atomic append to several streams: all are written or none. Events get positions in the order
   * given (stream by stream), so the result's position is that of the last stream's last event.
   * A stream given no events is checked, not written (StreamAppend); at least one is written.
   */
  appendMany(appends: StreamAppend[]): Promise<AppendResult>;
  /** events of one stream; an unknown stream reads as empty */
  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /** current revision of a stream, or null if it has no events */
  streamRevision(stream: string): Promise<bigint | null>;
  /** current revisions of several streams, in the order asked (null: no events), in one read where the adapter can */
  streamRevisions(streams: readonly string[]): Promise<(bigint | null)[]>;
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  /** readAll, answering also the position up to which it found every event it takes (ScannedRead) */
  readAllScanned(options: ReadAllOptions & WithoutMetadata): Promise<ScannedRead<EventWithoutMetadata>>;
  readAllScanned(options?: ReadAllOptions): Promise<ScannedRead>;
  /** readAll's events without their metadata and recorded time (a rebuild reads the whole store this way) */
  readAllBodies(options?: ReadAllOptions): Promise<EventBody[]>;
  /** position of the newest event, or 0n when the store is empty */
  headPosition(): Promise<bigint>;
  subscribeToAll(options: SubscribeOptions & WithoutMetadata): Subscription<EventWithoutMetadata>;
  subscribeToAll(options?: SubscribeOptions): Subscription;
  /** true when the store answers */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export const categoryOf = (stream: string): string => {
  const dash = stream.indexOf('-');
  return dash === -1 ? stream : stream.slice(0, dash);
};

/**
 * Whether an event passes a filter, as `readAll` applies it: when `categories` is given, the
 * stream's category is one of them; when `types` is given, the type is one of them (a given empty
 * list matches nothing).
 */
export const matchesEventFilter = (filter: EventFilter | undefined): ((event: Pick<RecordedEvent, 'stream' | 'type'>) => boolean) => {
  const categories = filter?.categories ? new Set(filter.categories) : undefined;
  const types = filter?.types ? new Set(filter.types) : undefined;
  return (event) => (!categories || categories.has(categoryOf(event.stream))) && (!types || types.has(event.type));
};
