import { gasBufferDecider, type GasBufferAccount, type GasBufferEvent } from '../domain/gas-buffer/gas-buffer.js';
import { streams } from '../domain/streams.js';
import type { EventStore, ExpectedRevision } from '../eventstore/port.js';
import { toDomainEvent } from './command-handler.js';

/**
 * An organization's gas buffer on one chain, as a decision starts from it: every event of the
 * stream carries the account after it, so its last event is the whole state (one event read,
 * however long the stream has grown).
 */
export const loadGasBuffer = async (store: EventStore, chainId: string, orgId: string): Promise<{ state: GasBufferAccount; expectedRevision: ExpectedRevision }> => {
  const [last] = await store.readStream(streams.gasBuffer(chainId, orgId), { direction: 'backwards', maxCount: 1 });
  if (!last) return { state: gasBufferDecider.initialState, expectedRevision: 'no_stream' };
  return { state: gasBufferDecider.evolve(gasBufferDecider.initialState, toDomainEvent<GasBufferEvent>(last)), expectedRevision: last.revision };
};
