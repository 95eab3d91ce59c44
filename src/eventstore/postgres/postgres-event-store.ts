import type pg from 'pg';
import type { Logger } from '../../log.js';
import { EventStoreUnavailableError } from '../errors.js';
import {
  writtenStreams,
  type EventBody,
  type EventFilter,
  type EventStore,
  type EventWithoutMetadata,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  type ScannedRead,
  type StreamAppend,
  type SubscribeOptions,
  type Subscription,
  type WithoutMetadata,
} from '../port.js';
import { pollingSubscription } from '../polling-subscription.js';
import { createPool } from '../../db/pool.js';
import { poolHealth } from '../../db/pool-health.js';
import { GroupCommitAppender } from './append.js';
import { AppendNotifications, type ReadSeen } from './notifications.js';
import { StreamChangeFeed } from './stream-changes.js';
import { EVENT_BODY_COLUMNS, EVENT_COLUMNS, EVENT_COLUMNS_WITHOUT_METADATA, toEventBody, toEventWithoutMetadata, toRecordedEvent, type EventRow } from './rows.js';

const DEFAULT_READ_COUNT = 1000;
const MAX_READ_COUNT = 10_000;
const LIVE_POLL_INTERVAL_MS = 1000;

const CONNECTION_FAILURE = /^(08|57P0[123]|53300)/;

const unavailableOnConnectionFailure = (error: unknown): never => {
  const { code } = error as { code?: string };
  if ((code && CONNECTION_FAILURE.test(code)) || code === 'ECONNREFUSED' || code === 'ENOENT') {
    throw new EventStoreUnavailableError('the PostgreSQL event store is unavailable', { cause: error });
  }
  throw error;
};

const boundedCount = (maxCount: number | undefined) => Math.min(Math.max(1, maxCount ?? DEFAULT_READ_COUNT), MAX_READ_COUNT);

/**
 * What a read of the log after $1 takes, and the order it is read in (position order). A read of one
 * category is exactly one range of the (category, position) index, from (c, $1) to the category's
 * end, ordered as that index is (`category, position`, the same order as position's within one
 * category): it costs what it finds. Three other forms cost what the log holds. `category = c and
 * position > $1` ordered by position: the planner took the primary key from the position on and
 * filtered as soon as its statistics made the category look common, so a reader of a quiet category
 * (a projection, a withdrawal processor, whose position stays at its category's last event) read
 * every later event of every category at each poll (60,000 later events: 32 ms against 0.14 ms);
 * ordering by `category, position` does not help, since the planner drops a column equal to a
 * constant from the order. `(category, position) > (c, $1) and category = c`: the index scan
 * started at the category's first entry, walking all of its own earlier events (on a 1M store
 * 1,000 to 2,000 pages a read, 27–60 ms, finding nothing). Several categories keep `category =
 * any(…)` in position order: one branch per category, merged, read up to $2 events from each, cost
 * more than the walk for the readers of several busy categories (the watchers', the audit streams').
 */
/** the largest position a bigint can hold: the end of a category's range in the (category, position) index */
const LAST_POSITION = '9223372036854775807::bigint';

const readCondition = (filter: EventFilter | undefined, params: unknown[]): { where: string; order: string } => {
  const categories = filter?.categories ? [...new Set(filter.categories)] : null;
  if (categories?.length === 0) return { where: 'false', order: 'position' };
  let where = 'position > $1::bigint';
  let order = 'position';
  if (categories?.length === 1) {
    params.push(categories[0]);
    where = `(category, position) > ($${params.length}::text, $1::bigint) and (category, position) <= ($${params.length}::text, ${LAST_POSITION})`;
    order = 'category, position';
  } else if (categories) {
    params.push(categories);
    where += ` and category = any($${params.length}::text[])`;
  }
  if (filter?.types) {
    params.push(filter.types);
    where += ` and type = any($${params.length}::text[])`;
  }
  return { where, order };
};

export interface PostgresEventStoreOptions {
  pool: pg.Pool;
  /** connection settings for the dedicated LISTEN session */
  listenConfig: pg.ClientConfig;
  logger: Logger;
}

/** The PostgreSQL event store, and the same store reading on another pool (see readingOn). */
export interface PostgresEventStore extends EventStore {
  /**
   * This store with its reads (and subscriptions' reads) on `pool`: one role's reads never wait
   * in another role's queue. Appends, notifications and the change feed stay this store's own;
   * closing the view closes nothing (this store, and the pool's owner, close them).
   */
  readingOn(pool: pg.Pool): EventStore;
}

/** The reads of the store, each a query on `pool`. */
const readsOn = (pool: pg.Pool, notifications: AppendNotifications) => {
  // the ping is asked without queueing behind the pool's work: a saturated pool answers from its record
  const health = poolHealth(pool);
  /** `name`: a statement of fixed text, prepared once per connection and then only bound and run */
  const query = async <Row extends object>(text: string, params: unknown[], name?: string): Promise<Row[]> => {
    const sent = name === undefined ? pool.query<Row>(text, params) : pool.query<Row>({ name, text, values: params });
    const result = await sent.catch(unavailableOnConnectionFailure);
    return result.rows;
  };

  const headPosition = async () => {
    const rows = await query<{ head: string | null }>('select max(position)::text as head from eventstore.events', []);
    return BigInt(rows[0]?.head ?? 0);
  };

  /** the rows of the events a readAll takes, with these columns */
  const readRows = <Row extends object>(columns: string, options: ReadAllOptions): Promise<Row[]> => {
    const params: unknown[] = [(options.afterPosition ?? 0n).toString(), boundedCount(options.maxCount)];
    const { where, order } = readCondition(options.filter, params);
    return query<Row>(`select ${columns} from eventstore.events where ${where} order by ${order} limit $2`, params);
  };

  const readAll = async (options: ReadAllOptions = {}): Promise<RecordedEvent[]> => (await readRows<EventRow>(EVENT_COLUMNS, options)).map(toRecordedEvent);

  const readAllBodies = async (options: ReadAllOptions = {}): Promise<EventBody[]> => (await readRows<EventRow>(EVENT_BODY_COLUMNS, options)).map(toEventBody);

  /**
   * readAll, and the store's head in the same snapshot: a read cut short of its count has seen
   * every position up to that head (positions commit in order), whatever its filter skipped. The
   * rows are put in position order here, not by a second sort in the server (which copied every
   * row, JSON and all, once more): they arrive in it already, and sorting rows in order costs one
   * comparison each. Without metadata (`metadata: false`) the events' metadata is not read.
   */
  const scan = async (options: ReadAllOptions & Partial<WithoutMetadata>): Promise<ScannedRead<EventWithoutMetadata>> => {
    const after = options.afterPosition ?? 0n;
    const maxCount = boundedCount(options.maxCount);
    const params: unknown[] = [after.toString(), maxCount];
    const { where, order } = readCondition(options.filter, params);
    const withoutMetadata = options.metadata === false;
    const rows = await query<EventRow & { head: string | null; global_position: string | null }>(
      `select snapshot.head::text as head, batch.*
         from (select max(position) as head from eventstore.events) as snapshot
         left join lateral (
           select ${withoutMetadata ? EVENT_COLUMNS_WITHOUT_METADATA : EVENT_COLUMNS} from eventstore.events
            where ${where}
            order by ${order} limit $2
         ) as batch on true`,
      params,
    );
    const events = rows
      .filter((row) => row.global_position !== null)
      .map(withoutMetadata ? toEventWithoutMetadata : toRecordedEvent)
      .sort((a, b) => (a.position < b.position ? -1 : a.position > b.position ? 1 : 0));
    if (events.length === maxCount) return { events, scannedTo: events[events.length - 1]!.position };
    const head = BigInt(rows[0]?.head ?? 0);
    return { events, scannedTo: head > after ? head : after };
  };
  function readAllScanned(options: ReadAllOptions & WithoutMetadata): Promise<ScannedRead<EventWithoutMetadata>>;
  function readAllScanned(options?: ReadAllOptions): Promise<ScannedRead>;
  function readAllScanned(options: ReadAllOptions & Partial<WithoutMetadata> = {}): Promise<ScannedRead<EventWithoutMetadata>> {
    return scan(options);
  }

  function subscribeToAll(options: SubscribeOptions & WithoutMetadata): Subscription<EventWithoutMetadata>;
  function subscribeToAll(options?: SubscribeOptions): Subscription;
  function subscribeToAll(options: SubscribeOptions & Partial<WithoutMetadata> = {}): Subscription<EventWithoutMetadata> {
    // what the last read saw: the notifications counted before it, and how far it looked, so
    // that only a notification of a later append wakes the next wait
    let seen: ReadSeen = { count: notifications.count };
    const { filter, metadata } = options;
    return pollingSubscription(
      {
        read: async (afterPosition, maxCount) => {
          const count = notifications.count;
          const read = await scan({ afterPosition, maxCount, filter, metadata });
          seen = { count, scannedTo: read.scannedTo };
          return read;
        },
        waitForMore: () => notifications.wait(LIVE_POLL_INTERVAL_MS, seen),
      },
      { afterPosition: options.afterPosition ?? 0n, maxBatchSize: boundedCount(options.maxBatchSize ?? 500) },
    );
  }

  const readStream = async (stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> => {
    const backwards = options.direction === 'backwards';
    const from = options.fromRevision ?? (backwards ? BigInt(Number.MAX_SAFE_INTEGER) : 0n);
    const rows = await query<EventRow>(
      `select ${EVENT_COLUMNS} from eventstore.events
        where stream_id = $1 and revision ${backwards ? '<=' : '>='} $2::bigint
        order by revision ${backwards ? 'desc' : 'asc'} limit $3`,
      [stream, from.toString(), options.maxCount ?? Number.MAX_SAFE_INTEGER],
      backwards ? 'eventstore-read-stream-backwards' : 'eventstore-read-stream',
    );
    return rows.map(toRecordedEvent);
  };

  const streamRevisions = async (streams: readonly string[]): Promise<(bigint | null)[]> => {
    const rows = await query<{ stream_id: string; stream_revision: string }>(
      'select stream_id, revision::text as stream_revision from eventstore.streams where stream_id = any($1::text[]) and revision >= 0',
      [[...new Set(streams)]],
      'eventstore-stream-revisions',
    );
    const revisions = new Map(rows.map((row) => [row.stream_id, BigInt(row.stream_revision)]));
    return streams.map((stream) => revisions.get(stream) ?? null);
  };

  return {
    query,
    headPosition,
    readAll,
    readAllScanned,
    readAllBodies,
    readStream,
    streamRevision: async (stream: string) => (await streamRevisions([stream]))[0]!,
    streamRevisions,
    subscribeToAll,
    ping: () => health.answers('select 1 from eventstore.events limit 1'),
  };
};

/** The default event store: PostgreSQL, schema `eventstore` (see its migration for the ordering argument). */
export const createPostgresEventStore = ({ pool, listenConfig, logger }: PostgresEventStoreOptions): PostgresEventStore => {
  const notifications = new AppendNotifications(listenConfig, logger);
  // Appends get connections of their own: one batch is written at a time, and it must not wait in
  // the shared pool's queue behind the reads of every request in flight (that wait, not the commit,
  // is what would set the pace of every ledger).
  const appendPool = createPool(listenConfig, { max: 2, purpose: 'eventstore-append' });
  const appender = new GroupCommitAppender(appendPool);
  const { query, ...reads } = readsOn(pool, notifications);

  const changes = new StreamChangeFeed(
    listenConfig,
    {
      head: reads.headPosition,
      changedAfter: async (position, categories, limit) => {
        const rows = await query<{ stream_id: string; position: string }>(
          `select stream_id, position::text as position from eventstore.events
            where category = any($2::text[]) and position > $1::bigint order by position limit $3`,
          [position.toString(), categories, limit],
        );
        return rows.map((row) => ({ stream: row.stream_id, position: BigInt(row.position) }));
      },
    },
    logger,
  );
  /** this process's followers hear of its own appends before the caller does (written or not: a failed one may be); a checked stream is not changed */
  const told = <Result>(appends: StreamAppend[], appending: Promise<Result>) =>
    appending.finally(() => changes.appended(writtenStreams(appends)));

  const store: EventStore = {
    changes,
    append: (stream, expectedRevision, events) => {
      const appends = [{ stream, expectedRevision, events }];
      return told(appends, appender.append(appends).catch(unavailableOnConnectionFailure));
    },
    appendMany: (appends: StreamAppend[]) => told(appends, appender.append(appends).catch(unavailableOnConnectionFailure)),
    ...reads,
    close: async () => {
      await changes.close();
      await notifications.close();
      await appendPool.end().catch(() => undefined);
    },
  };
  return {
    ...store,
    readingOn: (readPool) => {
      const { query: _query, ...viewReads } = readsOn(readPool, notifications);
      return { ...store, ...viewReads, close: async () => undefined };
    },
  };
};
