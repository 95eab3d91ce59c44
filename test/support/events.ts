import { randomBytes, randomUUID } from 'node:crypto';
import type { NewEvent } from '../../src/eventstore/port.js';

/** A category no other test uses, so suites can share one store (KurrentDB's $all is global). */
export const uniqueCategory = (label = 't'): string => `${label}${randomBytes(5).toString('hex')}`;

export const newEvent = (type = 'Happened', data: Record<string, unknown> = {}, actor = 'tester'): NewEvent => ({
  id: randomUUID(),
  type,
  data,
  metadata: { actor, at: '2026-11-22T00:00:00.000Z', requestId: 'req-1', correlationId: 'corr-1', causationId: 'cause-1' },
});

export const newEvents = (count: number, type = 'Happened'): NewEvent[] =>
  Array.from({ length: count }, (_, index) => newEvent(type, { index }));
