import type { DomainEvent } from '../decider.js';

/**
 * The first event of `withdrawalReference-<orgId>-<hash>`: the organization's `reference` belongs to
 * this withdrawal. Appended with no_stream in the same atomic append that creates the withdrawal,
 * so a reference is used once however many requests race with it (DUPLICATE_REFERENCE).
 */
export type WithdrawalReferenceClaimed = DomainEvent<'WithdrawalReferenceClaimed', { orgId: string; reference: string; withdrawalId: string; claimedAt: string }>;

export const withdrawalReferenceClaimed = (orgId: string, reference: string, withdrawalId: string, now: Date): WithdrawalReferenceClaimed => ({
  type: 'WithdrawalReferenceClaimed',
  data: { orgId, reference, withdrawalId, claimedAt: now.toISOString() },
});
