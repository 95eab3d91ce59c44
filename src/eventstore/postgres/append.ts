import pg from 'pg';
import { DuplicateEventIdError, WrongExpectedRevisionError } from '../errors.js';
import { checkedRevision, type AppendResult, type ExpectedRevision, type StreamAppend } from '../port.js';
import { validateAppends } from '../validate-append.js';
import { Coalescer } from '../../db/coalescer.js';
import { eventStoreAppendBatchSize, eventStoreAppendDuration } from '../../observability/metrics.js';
import { APPEND_BATCH_SQL, appendBatchParameters, batchOutcomes, type AppendBatchRow, type BatchOutcome } from './append-batch-parameters.js';

const decodeExpected = (expected: string): ExpectedRevision =>
  expected === 'any' || expected === 'no_stream' || expected === 'stream_exists' ? expected : BigInt(expected);

/**
 * An append that failed because its event ids are already stored is a retry of an append that
 * succeeded: answer with what is stored. Ids stored in other streams are a real conflict.
 */
const alreadyAppended = async (pool: pg.Pool, appends: StreamAppend[]): Promise<AppendResult | null> => {
  const ids = appends.flatMap(({ events }) => events.map((event) => event.id.toLowerCase()));
  const { rows } = await pool.query<{ event_id: string; stream_id: string; global_position: string }>(
    'select event_id::text, stream_id, position::text as global_position from eventstore.events where event_id = any($1::uuid[])',
    [ids],
  );
  if (rows.length === 0) return null;
  const stored = new Map(rows.map((row) => [row.event_id, row]));
  for (const { stream, events } of appends) {
    for (const event of events) {
      const row = stored.get(event.id.toLowerCase());
      if (!row || row.stream_id !== stream) throw new DuplicateEventIdError(row ? event.id : (rows[0]?.event_id ?? event.id));
    }
  }
  const revisions = await pool.query<{ stream_id: string; stream_revision: string }>(
    'select stream_id, max(revision)::text as stream_revision from eventstore.events where event_id = any($1::uuid[]) group by stream_id',
    [ids],
  );
  const byStream = new Map(revisions.rows.map((row) => [row.stream_id, BigInt(row.stream_revision)]));
  return {
    streams: appends.map(({ stream, expectedRevision, events }) => ({ stream, revision: events.length === 0 ? checkedRevision(expectedRevision) : (byStream.get(stream) ?? -1n) })),
    position: rows.reduce((max, row) => (BigInt(row.global_position) > max ? BigInt(row.global_position) : max), 0n),
  };
};

/** An event id as the caller spelled it (the database answers in lower case). */
const asGiven = (appends: StreamAppend[], eventId: string): string =>
  appends.flatMap(({ events }) => events).find((event) => event.id.toLowerCase() === eventId.toLowerCase())?.id ?? eventId;

/** One item's answer from `eventstore.append_batch`; a refused retry of a stored append answers what is stored. */
const settle = async (pool: pg.Pool, appends: StreamAppend[], outcome: BatchOutcome): Promise<AppendResult> => {
  if (!('error' in outcome)) {
    return { position: BigInt(outcome.position), streams: outcome.streams.map(({ stream, revision }) => ({ stream, revision: BigInt(revision) })) };
  }
  const retried = await alreadyAppended(pool, appends);
  if (retried) return retried;
  if (outcome.error === 'duplicate_event_id') throw new DuplicateEventIdError(asGiven(appends, outcome.eventId));
  throw new WrongExpectedRevisionError(outcome.stream, decodeExpected(outcome.expected), outcome.actual === '-1' ? null : BigInt(outcome.actual));
};

/**
 * Group commit. Appends that arrive while a batch is being written wait, and are written together
 * in the next one: ONE statement and ONE commit (one WAL flush) for all of them, each still its
 * own atomic append with its own answer (see the append_batch migrations). Idle, an append goes
 * out at once; under load the batches grow by themselves, so commits stop being the limit.
 *
 * After a batch is answered, the next one waits for the rest of that turn of the event loop: a
 * writer answered appends again before it goes out, and joins the ones already waiting. Without
 * that, in a closed loop the first writer answered went out alone and the others waited for it
 * (8 writers made batches of 1 and 7 in turn: half the commits carried one append).
 */
export class GroupCommitAppender {
  private readonly batches: Coalescer<StreamAppend[], { outcome: BatchOutcome } | { refused: unknown }>;

  constructor(
    private readonly pool: pg.Pool,
    maxAppendsPerBatch = 500,
  ) {
    const write = async (batch: StreamAppend[][]) => {
      eventStoreAppendBatchSize.observe(batch.length);
      const timer = eventStoreAppendDuration.startTimer();
      const { rows } = await pool.query<AppendBatchRow>({ name: 'eventstore-append-batch', text: APPEND_BATCH_SQL, values: appendBatchParameters(batch) });
      timer();
      return batchOutcomes(batch, rows[0]!);
    };
    this.batches = new Coalescer(async (batch) => {
      try {
        return (await write(batch)).map((outcome) => ({ outcome }));
      } catch (error) {
        if (batch.length === 1 || !refusedForItsData(error)) throw error;
        // one append the database refuses (a string jsonb cannot hold, say) must not fail the others
        // of its batch, other tenants' among them: each is written alone, and only that one fails
        const answers: ({ outcome: BatchOutcome } | { refused: unknown })[] = [];
        for (const item of batch) answers.push(await write([item]).then(([outcome]) => ({ outcome: outcome! }), (refused: unknown) => ({ refused })));
        return answers;
      }
    }, { maxBatch: maxAppendsPerBatch, gatherAfterAnswer: true });
  }

  async append(appends: StreamAppend[]): Promise<AppendResult> {
    validateAppends(appends);
    const answer = await this.batches.add(appends);
    if ('refused' in answer) throw answer.refused;
    return settle(this.pool, appends, answer.outcome);
  }
}

/**
 * A statement PostgreSQL refused for what it was given (SQLSTATE class 22 data exception, 23
 * integrity, 42 syntax or access, 54 limits), as opposed to a lost connection or a server that is
 * shutting down (08, 57, 53, 58), after which nothing is to be learnt from trying items one by one.
 */
const refusedForItsData = (error: unknown): boolean => error instanceof pg.DatabaseError && /^(22|23|42|54)/.test(error.code ?? '');
