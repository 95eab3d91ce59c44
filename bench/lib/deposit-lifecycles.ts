import { randomUUID } from 'node:crypto';
import { accountDecider } from '../../src/domain/account/account.js';
import type { DomainEvent } from '../../src/domain/decider.js';
import { depositDecider, type DepositCommand } from '../../src/domain/deposit/decide.js';
import type { DepositRef } from '../../src/domain/deposit/deposit.js';
import { ledgerDecider } from '../../src/domain/ledger/decide.js';
import type { LedgerState } from '../../src/domain/ledger/ledger.js';
import { streams } from '../../src/domain/streams.js';
import type { NewEvent, StreamAppend } from '../../src/eventstore/port.js';

/**
 * Deposit lifecycles as the application appends them, the events decided by the real deciders: the
 * user's account created (AccountCreated), the transfer detected with the ledger's pending amount
 * (one appendMany), then confirmed with the credit (one appendMany). Five events per lifecycle,
 * webhooks: account.created, deposit.detected, deposit.confirmed and two balance.updated.
 */
export interface DepositLifecycleOptions {
  orgIds: string[];
  /** an EVM token, so every credited deposit also queues a sweep */
  tokenId: string;
  chainId: string;
  start: Date;
}

const toEvent = (event: DomainEvent, orgId: string, at: Date): NewEvent => ({
  id: randomUUID(),
  type: event.type,
  data: event.data,
  metadata: { actor: 'bench', at: at.toISOString(), orgId, requestId: randomUUID() },
});

export interface DepositLifecycleGenerator {
  /** the appends of deposit `index`, step by step (each step is one atomic appendMany) */
  lifecycle(index: number): StreamAppend[][];
}

export const depositLifecycles = (options: DepositLifecycleOptions): DepositLifecycleGenerator => {
  const ledgers = new Map<string, LedgerState>();
  const ledgerStep = (orgId: string, command: 'AddPendingDeposit' | 'CreditDeposit', amount: bigint, deposit: DepositRef, now: Date) => {
    const events = ledgerDecider.decide({ type: command, orgId, tokenId: options.tokenId, amount, deposit }, ledgers.get(orgId) ?? ledgerDecider.initialState, { now });
    ledgers.set(orgId, events.reduce(ledgerDecider.evolve, ledgers.get(orgId) ?? ledgerDecider.initialState));
    return events;
  };

  return {
    lifecycle: (index) => {
      const orgId = options.orgIds[index % options.orgIds.length]!;
      const externalUserId = `depositor-${index}`;
      const time = (seconds: number) => new Date(options.start.getTime() + index * 10 + seconds * 1000);
      const address = `0x${(index + 1).toString(16).padStart(40, '0')}`;
      const account = accountDecider.decide(
        {
          type: 'CreateAccount',
          orgId,
          chainId: options.chainId,
          externalUserId,
          orgDepositAccountId: `acc_${randomUUID().replaceAll('-', '')}`,
          properties: { address },
          derivation: { space: `bench-${options.chainId}`, index },
        },
        accountDecider.initialState,
        { now: time(0) },
      );
      const ref: DepositRef = { chainId: options.chainId, txHash: `0x${(index + 1).toString(16).padStart(64, '0')}`, index: index % 3 };
      const amount = BigInt(1_000_000 + (index % 997));
      const detect: DepositCommand = {
        type: 'DetectDeposit',
        ...ref,
        tokenId: options.tokenId,
        amount: amount.toString(),
        orgId,
        externalUserId,
        accountChainId: options.chainId,
        toAddress: address,
        destinationTag: null,
        senderAddress: '0x00000000000000000000000000000000000000f1',
        blockNumber: 21_000_000 + index,
        blockHash: `0xb${index.toString(16).padStart(63, '0')}`,
        credit: 'credit',
      };
      const detected = depositDecider.decide(detect, depositDecider.initialState, { now: time(1) });
      const confirmed = depositDecider.decide({ type: 'ConfirmDeposit', confirmations: 12 }, detected.reduce(depositDecider.evolve, depositDecider.initialState), { now: time(3) });
      const depositStream = streams.deposit(ref.chainId, ref.txHash, ref.index);
      const ledgerStream = streams.ledger(orgId, options.tokenId);
      return [
        [{ stream: streams.account(orgId, options.chainId, externalUserId), expectedRevision: 'no_stream', events: account.map((event) => toEvent(event, orgId, time(0))) }],
        [
          { stream: depositStream, expectedRevision: 'no_stream', events: detected.map((event) => toEvent(event, orgId, time(1))) },
          { stream: ledgerStream, expectedRevision: 'any', events: ledgerStep(orgId, 'AddPendingDeposit', amount, ref, time(1)).map((event) => toEvent(event, orgId, time(1))) },
        ],
        [
          { stream: depositStream, expectedRevision: 0n, events: confirmed.map((event) => toEvent(event, orgId, time(3))) },
          { stream: ledgerStream, expectedRevision: 'any', events: ledgerStep(orgId, 'CreditDeposit', amount, ref, time(3)).map((event) => toEvent(event, orgId, time(3))) },
        ],
      ];
    },
  };
};
