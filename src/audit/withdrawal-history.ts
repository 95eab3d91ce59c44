import { withdrawalDetail } from '../domain/withdrawal/resource.js';
import { DomainError } from '../errors.js';
import { streams } from '../domain/streams.js';
import { evolveWithdrawal, initialWithdrawal, type Withdrawal, type WithdrawalEvent } from '../domain/withdrawal/withdrawal.js';
import type { EventStore } from '../eventstore/port.js';

export interface HistoryEntry {
  revision: number;
  type: string;
  data: Record<string, unknown>;
  metadata: { actor: string; credential: 'person' | 'api-key' | 'system' | null; username: string | null; requestId: string | null; at: string };
  /** the withdrawal after this event, as GET /withdrawals/:id answers it */
  state: ReturnType<typeof withdrawalDetail>;
}

/**
 * CONTRACT §9: every event of one withdrawal in order, each with the withdrawal as it stood after
 * it, replayed with the command side's own `evolveWithdrawal` (so the last state is what
 * GET /withdrawals/:id answers). Another organization's withdrawal is WITHDRAWAL_NOT_FOUND; `orgId`
 * null (the operator's CLI) reads any organization's.
 */
export const withdrawalHistory = async (store: EventStore, orgId: string | null, withdrawalId: string): Promise<HistoryEntry[]> => {
  const events = await store.readStream(streams.withdrawal(withdrawalId));
  const first = events[0];
  if (!first || first.type !== 'WithdrawalRequested' || (orgId !== null && first.data.orgId !== orgId)) {
    throw new DomainError('WITHDRAWAL_NOT_FOUND', `No withdrawal ${withdrawalId}`, { withdrawalId });
  }
  let state: Withdrawal = initialWithdrawal;
  return events.map((recorded) => {
    state = evolveWithdrawal(state, { type: recorded.type, data: recorded.data } as WithdrawalEvent);
    if (state.status === 'None') throw new Error(`withdrawal ${withdrawalId}: ${recorded.type} at revision ${recorded.revision} left no withdrawal`);
    return {
      revision: Number(recorded.revision),
      type: recorded.type,
      data: recorded.data,
      metadata: {
        actor: recorded.metadata.actor,
        credential: recorded.metadata.credential ?? null,
        username: recorded.metadata.username ?? null,
        requestId: recorded.metadata.requestId ?? null,
        at: recorded.metadata.at,
      },
      state: withdrawalDetail(state),
    };
  });
};
