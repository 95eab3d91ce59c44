import type { DomainEvent } from '../domain/decider.js';
import { ledgerDecider, type LedgerCommand } from '../domain/ledger/decide.js';
import {
  payoutBatchDecider,
  replacedWithdrawalCommands,
  signedWithdrawalCommands,
  type PayoutBatch,
  type PayoutBatchCommand,
  type PayoutBatchEvent,
} from '../domain/payout-batch/payout-batch.js';
import { streams } from '../domain/streams.js';
import { withdrawalDecider, type WithdrawalCommand } from '../domain/withdrawal/decide.js';
import { ledgerCommandsFor } from '../domain/withdrawal/ledger-effects.js';
import type { Withdrawal, WithdrawalEvent } from '../domain/withdrawal/withdrawal.js';
import type { ExpectedRevision } from '../eventstore/port.js';
import { decideAndAppend, loadAggregate, type CommandMetadata, type CommandServices, type DecidedAppend } from './command-handler.js';
import { onLedger, type LedgerBatcher, type LedgerView } from './ledger-batches.js';

type Services = CommandServices & { ledgerBatcher?: LedgerBatcher };
type Loaded<State> = { state: State; expectedRevision: ExpectedRevision };

const loadWithdrawals = (services: Services, ids: readonly string[]) => Promise.all(ids.map((id) => loadAggregate(services.store, streams.withdrawal(id), withdrawalDecider)));

/**
 * The batch's events and each of its withdrawals' in ONE append, with what they do to the
 * organization's ledger (each withdrawal's fee share held beside its amount): all at the revisions
 * they were decided on, or nothing. A withdrawal no longer waiting to be signed (cancelled, say)
 * refuses the whole decision, so the signed bytes are dropped unsent.
 */
const decideWithMembers = (
  ledger: LedgerView & { stream: string },
  now: Date,
  batch: { stream: string; loaded: Loaded<PayoutBatch>; events: PayoutBatchEvent[] },
  members: readonly Loaded<Withdrawal>[],
  commandsOf: (member: Withdrawal, index: number) => Exclude<WithdrawalCommand, { type: 'RequestWithdrawal' }>[],
): { appends: DecidedAppend[]; result: { events: PayoutBatchEvent[] } } => {
  const appends: DecidedAppend[] = [{ stream: batch.stream, expectedRevision: batch.loaded.expectedRevision, events: batch.events }];
  let balances = ledger.state;
  const ledgerEvents: DomainEvent[] = [];
  const onLedgerOf = (commands: LedgerCommand[]) => {
    for (const command of commands) {
      const decided = ledgerDecider.decide(command, balances, { now });
      balances = decided.reduce(ledgerDecider.evolve, balances);
      ledgerEvents.push(...decided);
    }
  };
  for (const [index, member] of members.entries()) {
    let state = member.state;
    const events: WithdrawalEvent[] = [];
    for (const command of commandsOf(member.state, index)) {
      const decided = withdrawalDecider.decide(command, state, { now });
      onLedgerOf(ledgerCommandsFor(state, decided));
      state = decided.reduce(withdrawalDecider.evolve, state);
      events.push(...decided);
    }
    if (state.status === 'None') throw new Error('a payout batch names a withdrawal that does not exist');
    appends.push({ stream: streams.withdrawal(state.id), expectedRevision: member.expectedRevision, events });
  }
  appends.push({ stream: ledger.stream, expectedRevision: ledger.expectedRevision, events: ledgerEvents });
  return { appends, result: { events: batch.events } };
};

/**
 * Records a payout batch before it is sent (Bitcoin): `payoutBatch-<chainId>-<id>` created with
 * "no stream", each withdrawal's `WithdrawalTransactionSigned` (its share of the fee, the batch it
 * is paid in) at the revision it was read at, and each share held on the ledger, in one atomic
 * append through the ledger's queue. INSUFFICIENT_BALANCE when the available balance cannot hold
 * the shares; WITHDRAWAL_ALREADY_PROCESSED when a withdrawal is no longer waiting: nothing written.
 */
export const recordPayoutBatch = (services: Services, command: Extract<PayoutBatchCommand, { type: 'RecordPayoutBatch' }>, metadata: CommandMetadata) => {
  const batchStream = streams.payoutBatch(command.chainId, command.batchId);
  const ledgerStream = streams.ledger(command.orgId, command.tokenId);
  const signed = signedWithdrawalCommands(command);
  return onLedger(services, ledgerStream, { ...metadata, orgId: command.orgId }, {
    stream: batchStream,
    read: async () => ({
      batch: await loadAggregate(services.store, batchStream, payoutBatchDecider),
      members: await loadWithdrawals(services, command.withdrawals.map((withdrawal) => withdrawal.id)),
    }),
    decide: (ledger, now, { batch, members }) => {
      const events = payoutBatchDecider.decide(command, batch.state, { now });
      return decideWithMembers({ ...ledger, stream: ledgerStream }, now, { stream: batchStream, loaded: batch, events }, members, (_member, index) => [signed[index]!]);
    },
  });
};

/**
 * Records a batch's replacement by fee before it is sent: the batch's `PayoutBatchReplaced` and
 * each withdrawal's `WithdrawalTransactionReplaced` (its hold raised to its new share), in one
 * append. A withdrawal whose broadcast was not recorded yet (a crash) gets it first, in the same append.
 */
export const recordPayoutBatchReplacement = (services: Services, batch: Extract<PayoutBatch, { status: 'Signed' }>, command: Extract<PayoutBatchCommand, { type: 'RecordPayoutBatchReplacement' }>, metadata: CommandMetadata) => {
  const batchStream = streams.payoutBatch(batch.chainId, batch.batchId);
  const ledgerStream = streams.ledger(batch.orgId, batch.tokenId);
  return onLedger(services, ledgerStream, { ...metadata, orgId: batch.orgId }, {
    stream: batchStream,
    read: async () => ({
      loaded: await loadAggregate(services.store, batchStream, payoutBatchDecider),
      members: await loadWithdrawals(services, batch.withdrawals.map((withdrawal) => withdrawal.id)),
    }),
    decide: (ledger, now, { loaded, members }) => {
      if (loaded.state.status !== 'Signed') throw new Error(`no payout batch ${batch.batchId}`);
      const events = payoutBatchDecider.decide(command, loaded.state, { now });
      const replaced = replacedWithdrawalCommands(loaded.state, command);
      return decideWithMembers({ ...ledger, stream: ledgerStream }, now, { stream: batchStream, loaded, events }, members, (member, index) => [
        ...(member.status === 'Pending' && member.signedTransaction?.txHash === command.replacedTxHash ? [{ type: 'RecordBroadcast' as const, id: member.id, txHash: command.replacedTxHash }] : []),
        replaced[index]!,
      ]);
    },
  });
};

/** Once the node took a batch's transaction: every withdrawal it pays is Processing, in one append (those recorded so already are left alone). */
export const recordPayoutBatchBroadcast = (services: Services, withdrawalIds: readonly string[], txHash: string, metadata: CommandMetadata) =>
  decideAndAppend(services, metadata, async (now) => {
    const members = await loadWithdrawals(services, withdrawalIds);
    const appends: DecidedAppend[] = [];
    for (const member of members) {
      const { state } = member;
      if (state.status !== 'Pending' || state.signedTransaction?.txHash !== txHash) continue;
      appends.push({ stream: streams.withdrawal(state.id), expectedRevision: member.expectedRevision, events: withdrawalDecider.decide({ type: 'RecordBroadcast', id: state.id, txHash }, state, { now }) });
    }
    return { appends, result: {} };
  });
