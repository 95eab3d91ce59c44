import { BoundedMap } from '../../lib/bounded-map.js';
import type { SharedEventsReader } from '../shared-events-reader.js';

/** requests awaiting approval remembered, for all of a reader's processors together */
const AWAITING_APPROVAL_KEPT = 100_000;

interface Awaiting {
  chainId: string;
  orgId: string;
  /** how many of the reader's consumers took its approval so far */
  approvalsTaken: number;
}

/**
 * The withdrawals seen requested awaiting approval, on any chain, once for all the withdrawal
 * processors that share a reader of the ready events (every chain's processor used to keep its own
 * copy of every chain's): an approval names neither chain nor organization, and with this a
 * processor knows both without reading the withdrawal's stream. Every consumer of the reader takes
 * every event, so an entry is kept until each of them has taken its approval, then forgotten.
 * Memory only, bounded: past AWAITING_APPROVAL_KEPT the least recently seen goes, and one
 * forgotten (or requested before the processors started) is read from its stream when approved.
 */
export class AwaitingApprovals {
  private readonly entries = new BoundedMap<string, Awaiting>(AWAITING_APPROVAL_KEPT);

  /** @param takers how many consumers take each approval (the reader's, at that moment) */
  constructor(private readonly takers: () => number) {}

  /** how many are remembered */
  get size(): number {
    return this.entries.size;
  }

  remember(id: string, chainId: string, orgId: string): void {
    if (this.entries.get(id) === undefined) this.entries.set(id, { chainId, orgId, approvalsTaken: 0 });
  }

  /** the approved withdrawal's chain and organization, if remembered; the last consumer to take the approval forgets it */
  approved(id: string): { chainId: string; orgId: string } | undefined {
    const entry = this.entries.get(id);
    if (entry === undefined) return undefined;
    entry.approvalsTaken++;
    if (entry.approvalsTaken >= this.takers()) this.entries.delete(id);
    return entry;
  }
}

const byReader = new WeakMap<SharedEventsReader, AwaitingApprovals>();

/** the awaiting approvals the consumers of `reader` share */
export const awaitingApprovalsOf = (reader: SharedEventsReader): AwaitingApprovals => {
  let awaiting = byReader.get(reader);
  if (!awaiting) byReader.set(reader, (awaiting = new AwaitingApprovals(() => reader.consumerCount)));
  return awaiting;
};
