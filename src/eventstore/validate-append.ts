import { InvalidAppendError } from './errors.js';
import type { StreamAppend } from './port.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Shape rules every adapter enforces the same way before writing anything. */
export const validateAppends = (appends: StreamAppend[]): void => {
  if (!appends.some(({ events }) => events.length > 0)) throw new InvalidAppendError('an append writes at least one event (a stream given no events is only checked)');
  const streams = new Set<string>();
  const ids = new Set<string>();
  for (const { stream, expectedRevision, events } of appends) {
    if (stream.length === 0 || stream.startsWith('$')) throw new InvalidAppendError(`invalid stream name "${stream}"`);
    if (streams.has(stream)) throw new InvalidAppendError(`stream ${stream} is named twice in one append`);
    streams.add(stream);
    if (typeof expectedRevision === 'bigint' && expectedRevision < 0n) {
      throw new InvalidAppendError(`expected revision ${expectedRevision} is negative`);
    }
    if (events.length === 0 && expectedRevision !== 'no_stream' && typeof expectedRevision !== 'bigint') {
      throw new InvalidAppendError(`a check of ${stream} (no events) names a revision or no_stream, not ${expectedRevision}`);
    }
    for (const event of events) {
      if (!UUID.test(event.id)) throw new InvalidAppendError(`event id "${event.id}" is not a UUID`);
      const id = event.id.toLowerCase();
      if (ids.has(id)) throw new InvalidAppendError(`event id ${event.id} appears twice in one append`);
      ids.add(id);
      if (event.type.length === 0) throw new InvalidAppendError('an event type is empty');
    }
  }
};
