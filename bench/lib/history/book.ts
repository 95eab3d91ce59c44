import type { DecidedAppend } from '../../../src/application/command-handler.js';
import type { DomainEvent } from '../../../src/domain/decider.js';
import { derivationCounterDecider, type DerivationCounter, type DerivationOwnerEvent } from '../../../src/domain/derivation/derivation.js';
import { ledgerDecider, type LedgerCommand } from '../../../src/domain/ledger/decide.js';
import type { LedgerState } from '../../../src/domain/ledger/ledger.js';
import { streams } from '../../../src/domain/streams.js';
import type { EventStore } from '../../../src/eventstore/port.js';

/**
 * What the history fill remembers of the streams it writes, so every append states the exact
 * revision it was decided on (as the service's command path does) without reading the store: each
 * stream's revision, each ledger's balances, each derivation counter.
 */
export class HistoryBook {
  private readonly revisions = new Map<string, bigint>();
  private readonly ledgers = new Map<string, LedgerState>();
  private readonly counters = new Map<string, DerivationCounter>();

  /** `events` appended to `stream` at the revision the book holds (no_stream for a new one) */
  append(stream: string, events: DomainEvent[]): DecidedAppend {
    const last = this.revisions.get(stream);
    this.revisions.set(stream, (last ?? -1n) + BigInt(events.length));
    return { stream, expectedRevision: last ?? 'no_stream', events };
  }

  /** the ledger commands decided one after another by the real decider (a refusal throws: the fill's plan was wrong) */
  ledger(orgId: string, tokenId: string, commands: LedgerCommand[], now: Date): DecidedAppend {
    const stream = streams.ledger(orgId, tokenId);
    let state = this.ledgers.get(stream) ?? ledgerDecider.initialState;
    const events = commands.flatMap((command) => {
      const decided = ledgerDecider.decide(command, state, { now });
      state = decided.reduce(ledgerDecider.evolve, state);
      return decided;
    });
    this.ledgers.set(stream, state);
    return this.append(stream, events);
  }

  available(orgId: string, tokenId: string): bigint {
    return (this.ledgers.get(streams.ledger(orgId, tokenId)) ?? ledgerDecider.initialState).available;
  }

  /**
   * The next index of a key space for `owner`, as `indexFor` (src/application/deposit-accounts.ts)
   * allocates it: the counter's event and the owner's claim, to append atomically.
   */
  allocate(space: string, orgId: string, owner: string, now: Date): { index: number; appends: DecidedAppend[] } {
    const counterStream = streams.derivationCounter(space);
    const counter = this.counters.get(space) ?? derivationCounterDecider.initialState;
    const allocated = derivationCounterDecider.decide({ type: 'AllocateDerivationIndex', space, orgId, owner }, counter, { now });
    this.counters.set(space, allocated.reduce(derivationCounterDecider.evolve, counter));
    const index = allocated[0]!.data.index;
    const assigned: DerivationOwnerEvent = { type: 'DerivationIndexAssigned', data: { space, index, orgId, owner, assignedAt: now.toISOString() } };
    return { index, appends: [this.append(counterStream, allocated), this.append(streams.derivationOwner(space, orgId, owner), [assigned])] };
  }

  /** the counters of `spaces` as the store holds them: a store that already has accounts (the bench's own) goes on from there */
  async loadCounters(store: EventStore, spaces: Iterable<string>): Promise<void> {
    for (const space of spaces) {
      const stream = streams.derivationCounter(space);
      const [last] = await store.readStream(stream, { direction: 'backwards', maxCount: 1 });
      if (!last) continue;
      this.revisions.set(stream, last.revision);
      this.counters.set(space, { nextIndex: Number(last.data.index) + 1 });
    }
  }
}
