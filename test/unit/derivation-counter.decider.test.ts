import { describe, expect, it } from 'vitest';
import { counterAfterLast, derivationCounterDecider, MAX_DERIVATION_INDEX, type DerivationCounterEvent } from '../../src/domain/derivation/derivation.js';
import { NOW } from '../support/given-when-then.js';

const allocate = (state: { nextIndex: number }, owner: string) =>
  derivationCounterDecider.decide({ type: 'AllocateDerivationIndex', space: 'eip155', orgId: 'o1', owner }, state, { now: NOW });

/** a counter stream as the command path writes it: each allocation decided on the fold of the ones before */
const streamOf = (count: number): DerivationCounterEvent[] => {
  const events: DerivationCounterEvent[] = [];
  let state = derivationCounterDecider.initialState;
  for (let n = 0; n < count; n++) {
    const decided = allocate(state, `user-${n}`);
    events.push(...decided);
    state = decided.reduce(derivationCounterDecider.evolve, state);
  }
  return events;
};

describe('derivation counter', () => {
  it('hands out 0, 1, 2, … in the order of the stream', () => {
    expect(streamOf(5).map((event) => event.data.index)).toEqual([0, 1, 2, 3, 4]);
  });

  it('from its last event alone is the fold of the whole stream, for every length', () => {
    for (const count of [0, 1, 2, 7, 300]) {
      const events = streamOf(count);
      const folded = events.reduce(derivationCounterDecider.evolve, derivationCounterDecider.initialState);
      expect(counterAfterLast(events.at(-1))).toEqual(folded);
      expect(counterAfterLast(events.at(-1))).toEqual({ nextIndex: count });
    }
  });

  it('the next index decided from the last event is the one the whole fold decides', () => {
    const events = streamOf(40);
    const folded = events.reduce(derivationCounterDecider.evolve, derivationCounterDecider.initialState);
    expect(allocate(counterAfterLast(events.at(-1)), 'next')).toEqual(allocate(folded, 'next'));
  });

  it('refuses to allocate past the last non-hardened index', () => {
    const last: DerivationCounterEvent = { type: 'DerivationIndexAllocated', data: { space: 'eip155', index: MAX_DERIVATION_INDEX, orgId: 'o1', owner: 'u', allocatedAt: NOW.toISOString() } };
    expect(() => allocate(counterAfterLast(last), 'one-too-many')).toThrow(/exhausted/);
  });
});
