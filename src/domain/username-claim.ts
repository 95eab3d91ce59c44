import type { DomainEvent } from './decider.js';

/** The claim on a login name: its stream exists once, created with no_stream. */
export type UsernameClaimEvent = DomainEvent<'UsernameClaimed', { username: string; userId: string; orgId: string; claimedAt: string }>;

export const usernameClaimed = (username: string, userId: string, orgId: string, at: Date): UsernameClaimEvent => ({
  type: 'UsernameClaimed',
  data: { username, userId, orgId, claimedAt: at.toISOString() },
});
