import type { LedgerEvent, LedgerState } from '../domain/ledger/ledger.js';
import { balancesFromData, ZERO } from '../domain/ledger/ledger.js';
import type { EventStore, ExpectedRevision } from '../eventstore/port.js';
import { toDomainEvent } from './command-handler.js';

/**
 * A ledger's balances and revision, from its last event alone (every ledger event states the
 * balances it leaves): one read of one event, however many deposits and withdrawals the stream holds.
 */
export const loadLedger = async (store: EventStore, stream: string): Promise<{ state: LedgerState; expectedRevision: ExpectedRevision }> => {
  const [last] = await store.readStream(stream, { direction: 'backwards', maxCount: 1 });
  if (!last) return { state: ZERO, expectedRevision: 'no_stream' };
  return { state: balancesFromData(toDomainEvent<LedgerEvent>(last).data.balancesAfter), expectedRevision: last.revision };
};
