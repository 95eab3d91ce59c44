import type { Decider, DomainEvent } from '../decider.js';

/**
 * Derivation indexes of one address space (a key tree: all EVM chains share one, each Bitcoin
 * network has its own…). The counter stream hands out 0, 1, 2, … — the index is the number of
 * indexes allocated before, so an append with the expected revision can never hand one out twice.
 */
export type DerivationCounterEvent = DomainEvent<
  'DerivationIndexAllocated',
  { space: string; index: number; orgId: string; owner: string; allocatedAt: string }
>;

export type DerivationCounter = { nextIndex: number };

export type AllocateDerivationIndex = { type: 'AllocateDerivationIndex'; space: string; orgId: string; owner: string };

/** Non-hardened BIP32 children: indexes stay below 2^31. */
export const MAX_DERIVATION_INDEX = 2 ** 31 - 1;

export const derivationCounterDecider: Decider<AllocateDerivationIndex, DerivationCounterEvent, DerivationCounter> = {
  initialState: { nextIndex: 0 },
  evolve: (state, event) => ({ nextIndex: Math.max(state.nextIndex, event.data.index + 1) }),
  decide: (command, state, { now }) => {
    if (state.nextIndex > MAX_DERIVATION_INDEX) throw new Error(`derivation space ${command.space} is exhausted`);
    return [
      {
        type: 'DerivationIndexAllocated',
        data: { space: command.space, index: state.nextIndex, orgId: command.orgId, owner: command.owner, allocatedAt: now.toISOString() },
      },
    ];
  },
};

/**
 * The counter after all of a stream's events, from its last event alone. Each allocation is decided
 * on the counter folded up to the revision it is appended at (an append with that expected
 * revision), so it is above every index before it: a counter stream's indexes strictly increase, its
 * last event holds the largest, and the fold of the whole stream is `evolve` of that one event.
 * A read of one event, however many indexes the space has handed out.
 */
export const counterAfterLast = (last: DerivationCounterEvent | undefined): DerivationCounter =>
  last ? derivationCounterDecider.evolve(derivationCounterDecider.initialState, last) : derivationCounterDecider.initialState;

/** The index an owner (a user of an organization) holds in a space: one per owner, kept for good. */
export type DerivationOwnerEvent = DomainEvent<'DerivationIndexAssigned', { space: string; index: number; orgId: string; owner: string; assignedAt: string }>;
