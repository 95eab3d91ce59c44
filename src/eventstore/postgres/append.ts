import type pg from 'pg';
import { DuplicateEventIdError, WrongExpectedRevisionError } from '../errors.js';
import { categoryOf, type AppendResult, type ExpectedRevision, type StreamAppend } from '../port.js';
import { validateAppends } from '../validate-append.js';

const WRONG_EXPECTED_REVISION = 'LG001';
const UNIQUE_VIOLATION = '23505';

interface PgError {
  code?: string;
  detail?: string;
  constraint?: string;
}

const encodeExpected = (expected: ExpectedRevision): string => (typeof expected === 'bigint' ? expected.toString() : expected);

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
    streams: appends.map(({ stream }) => ({ stream, revision: byStream.get(stream) ?? -1n })),
    position: rows.reduce((max, row) => (BigInt(row.global_position) > max ? BigInt(row.global_position) : max), 0n),
  };
};

export const appendToStreams = async (pool: pg.Pool, appends: StreamAppend[]): Promise<AppendResult> => {
  validateAppends(appends);
  const payload = appends.map(({ stream, expectedRevision, events }) => ({
    stream,
    category: categoryOf(stream),
    expected: encodeExpected(expectedRevision),
    events: events.map(({ id, type, data, metadata }) => ({ id, type, data, metadata })),
  }));
  try {
    const { rows } = await pool.query<{ result: { position: string; streams: { stream: string; revision: string }[] } }>(
      'select eventstore.append($1::jsonb) as result',
      [JSON.stringify(payload)],
    );
    const result = rows[0]!.result;
    return {
      position: BigInt(result.position),
      streams: result.streams.map(({ stream, revision }) => ({ stream, revision: BigInt(revision) })),
    };
  } catch (error) {
    const pgError = error as PgError;
    if (pgError.code === WRONG_EXPECTED_REVISION || (pgError.code === UNIQUE_VIOLATION && pgError.constraint === 'events_event_id_key')) {
      const retried = await alreadyAppended(pool, appends);
      if (retried) return retried;
    }
    if (pgError.code === WRONG_EXPECTED_REVISION) {
      const detail = JSON.parse(pgError.detail ?? '{}') as { stream: string; expected: string; actual: string };
      throw new WrongExpectedRevisionError(
        detail.stream,
        decodeExpected(detail.expected),
        detail.actual === '-1' ? null : BigInt(detail.actual),
      );
    }
    throw error;
  }
};
