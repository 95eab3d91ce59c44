import type { EventBody, EventMetadata, EventWithoutMetadata, RecordedEvent } from '../port.js';

export interface EventRow {
  global_position: string;
  stream_id: string;
  stream_revision: string;
  event_id: string;
  type: string;
  data: Record<string, unknown>;
  metadata: EventMetadata;
  recorded_at: Date;
}

/**
 * An event's columns without the metadata and the recorded time (no JSON or date to encode, send
 * and decode for them). bigints travel as text (exact in JavaScript); the aliases differ from the
 * column names so that an `order by position` can only mean the bigint column, never its text form.
 */
export const EVENT_BODY_COLUMNS = `position::text as global_position, stream_id, revision::text as stream_revision, event_id::text as event_id, type, data`;

/** An event's columns without the metadata (what the projections' reads take: no JSON to encode, send and decode for it). */
export const EVENT_COLUMNS_WITHOUT_METADATA = `${EVENT_BODY_COLUMNS}, recorded_at`;

export const EVENT_COLUMNS = `${EVENT_COLUMNS_WITHOUT_METADATA}, metadata`;

export const toEventBody = (row: Omit<EventRow, 'metadata' | 'recorded_at'>): EventBody => ({
  id: row.event_id,
  stream: row.stream_id,
  revision: BigInt(row.stream_revision),
  position: BigInt(row.global_position),
  type: row.type,
  data: row.data,
});

export const toEventWithoutMetadata = (row: Omit<EventRow, 'metadata'>): EventWithoutMetadata => ({ ...toEventBody(row), recordedAt: row.recorded_at });

export const toRecordedEvent = (row: EventRow): RecordedEvent => ({ ...toEventBody(row), metadata: row.metadata, recordedAt: row.recorded_at });
