import { randomUUID } from 'node:crypto';
import type { DomainEvent } from '../../src/domain/decider.js';
import type { BalancesData, LedgerEvent } from '../../src/domain/ledger/ledger.js';
import { streams } from '../../src/domain/streams.js';
import { withdrawalReferenceClaimed } from '../../src/domain/withdrawal/reference-claim.js';
import type { WithdrawalEvent } from '../../src/domain/withdrawal/withdrawal.js';
import type { NewEvent, StreamAppend } from '../../src/eventstore/port.js';

/**
 * Synthetic but faithful withdrawal lifecycles, shaped as the application appends them: the request
 * with its reference claim and the hold on the ledger (one appendMany), then the broadcast, then the
 * completion with the posted hold. Six events per withdrawal, five webhooks (created, processing,
 * completed, two balance.updated). Ledgers keep consistent `balancesAfter` across lifecycles.
 */
export interface LifecycleOptions {
  orgIds: string[];
  tokenId: string;
  chainId: string;
  /** the time of the first event; each withdrawal's events are a few seconds apart */
  start: Date;
}

const toEvent = (event: DomainEvent, orgId: string, at: string): NewEvent => ({
  id: randomUUID(),
  type: event.type,
  data: event.data,
  metadata: { actor: 'bench', at, orgId, requestId: randomUUID() },
});

export interface LifecycleGenerator {
  /** the appends of withdrawal `index`, step by step (each step is one atomic appendMany) */
  lifecycle(index: number): StreamAppend[][];
}

export const withdrawalLifecycles = (options: LifecycleOptions): LifecycleGenerator => {
  const balances = new Map<string, { available: bigint; held: bigint }>();
  const ledgerEvent = (orgId: string, type: 'FundsHeld' | 'HoldPosted', amount: bigint, withdrawalId: string, at: string): LedgerEvent => {
    const current = balances.get(orgId) ?? { available: 10n ** 30n, held: 0n };
    const after = type === 'FundsHeld' ? { available: current.available - amount, held: current.held + amount } : { available: current.available, held: current.held - amount };
    balances.set(orgId, after);
    const balancesAfter: BalancesData = { available: after.available.toString(), pending: '0', held: after.held.toString() };
    return { type, data: { orgId, tokenId: options.tokenId, amount: amount.toString(), occurredAt: at, balancesAfter, withdrawalId } };
  };

  return {
    lifecycle: (index) => {
      const orgId = options.orgIds[index % options.orgIds.length]!;
      const id = `wd_${randomUUID().replaceAll('-', '')}`;
      const amount = BigInt(1_000 + (index % 997));
      const time = (seconds: number) => new Date(options.start.getTime() + index * 10 + seconds * 1000).toISOString();
      const txHash = `0x${index.toString(16).padStart(64, '0')}`;
      const reference = `bench-${index}`;
      const withdrawalStream = streams.withdrawal(id);
      const ledgerStream = streams.ledger(orgId, options.tokenId);
      const requested: WithdrawalEvent = {
        type: 'WithdrawalRequested',
        data: {
          id,
          orgId,
          chainId: options.chainId,
          tokenId: options.tokenId,
          amount: amount.toString(),
          recipient: `0x${(index + 1).toString(16).padStart(40, '0')}`,
          memo: null,
          reference,
          internalNote: '',
          externalUserId: `user-${index % 100}`,
          initiator: `usr_${orgId}`,
          minWithdrawalSigners: 1,
          status: 'Pending',
          requestedAt: time(0),
        },
      };
      const broadcast: WithdrawalEvent = { type: 'WithdrawalBroadcast', data: { id, txHash, broadcastAt: time(2) } };
      const completed: WithdrawalEvent = { type: 'WithdrawalCompleted', data: { id, txHash, blockNumber: 1000 + index, fee: '21000', completedAt: time(4) } };
      return [
        [
          { stream: withdrawalStream, expectedRevision: 'no_stream', events: [toEvent(requested, orgId, time(0))] },
          {
            stream: streams.withdrawalReference(orgId, reference),
            expectedRevision: 'no_stream',
            events: [toEvent(withdrawalReferenceClaimed(orgId, reference, id, new Date(time(0))), orgId, time(0))],
          },
          { stream: ledgerStream, expectedRevision: 'any', events: [toEvent(ledgerEvent(orgId, 'FundsHeld', amount, id, time(0)), orgId, time(0))] },
        ],
        [{ stream: withdrawalStream, expectedRevision: 0n, events: [toEvent(broadcast, orgId, time(2))] }],
        [
          { stream: withdrawalStream, expectedRevision: 1n, events: [toEvent(completed, orgId, time(4))] },
          { stream: ledgerStream, expectedRevision: 'any', events: [toEvent(ledgerEvent(orgId, 'HoldPosted', amount, id, time(4)), orgId, time(4))] },
        ],
      ];
    },
  };
};
