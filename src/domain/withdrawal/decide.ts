import type { DecideContext, Decider } from '../decider.js';
import { DomainError } from '../../errors.js';
import { canReplace } from './eip1559-replacement.js';
import { evolveWithdrawal, initialWithdrawal, type PayoutBatchRef, type SignedTransaction, type SpentOutput, type Withdrawal, type WithdrawalEvent, type WithdrawalRecord, type WithdrawalRequestedData } from './withdrawal.js';

export type WithdrawalCommand =
  | ({ type: 'RequestWithdrawal' } & Omit<WithdrawalRequestedData, 'status' | 'requestedAt'>)
  | { type: 'ApproveWithdrawal'; id: string; userId: string }
  | { type: 'CancelWithdrawal'; id: string; userId: string; username: string }
  // the withdrawal processor's
  // `holdFee`: the organization's balance pays the network fee (Bitcoin, XRP), so it is held with the amount
  | {
      type: 'RecordSignedTransaction';
      id: string;
      raw: string;
      txHash: string;
      nonce: number | null;
      fee: string;
      headBlockNumber?: number;
      inputs?: SpentOutput[];
      maxFeePerGas?: string;
      maxPriorityFeePerGas?: string;
      holdFee?: boolean;
      batch?: PayoutBatchRef;
    }
  | { type: 'RecordBroadcast'; id: string; txHash: string }
  | {
      type: 'RecordReplacementTransaction';
      id: string;
      raw: string;
      txHash: string;
      replacedTxHash: string;
      fee: string;
      headBlockNumber: number;
      inputs?: SpentOutput[];
      nonce?: number;
      maxFeePerGas?: string;
      maxPriorityFeePerGas?: string;
      holdFee?: boolean;
      batch?: PayoutBatchRef;
    }
  | { type: 'CompleteWithdrawal'; id: string; txHash: string; blockNumber: number; fee: string }
  | { type: 'FailWithdrawal'; id: string; txnError: string };

const maxOf = (a: bigint, b: bigint) => (a > b ? a : b);

const notFound = (id: string) => new DomainError('WITHDRAWAL_NOT_FOUND', `No withdrawal ${id}`, { withdrawalId: id });

const existing = (state: Withdrawal, id: string): WithdrawalRecord => {
  if (state.status === 'None') throw notFound(id);
  return state;
};

/** the processor asked for a step the withdrawal is past or not yet at */
const outOfOrder = (state: WithdrawalRecord, step: string) =>
  new DomainError('WITHDRAWAL_ALREADY_PROCESSED', `Withdrawal ${state.id} is ${state.status}${state.signedTransaction ? ' (signed)' : ''}: it cannot ${step}`, {
    withdrawalId: state.id,
    status: state.status,
  });

const request = (command: Extract<WithdrawalCommand, { type: 'RequestWithdrawal' }>, state: Withdrawal, now: string): WithdrawalEvent[] => {
  // the stream is created with no_stream, so a second request for one id never reaches a store either
  if (state.status !== 'None') throw new Error(`withdrawal ${command.id} already exists: ids are never reused`);
  if (!Number.isInteger(command.minWithdrawalSigners) || command.minWithdrawalSigners < 1) {
    throw new DomainError('INVALID_MIN_SIGNERS', 'minWithdrawalSigners is an integer of at least 1');
  }
  const { type: _type, ...data } = command;
  // SPEC §3: the initiator's own approval counts; more signers wait for theirs
  const status = command.minWithdrawalSigners <= 1 ? 'Pending' : 'PendingApproval';
  return [{ type: 'WithdrawalRequested', data: { ...data, status, requestedAt: now } }];
};

/**
 * CONTRACT §4: an approval counts only while the withdrawal waits for approvals (else
 * WITHDRAWAL_ALREADY_PROCESSED, whoever asks), and once per user (DUPLICATE_APPROVAL).
 */
const approve = (command: Extract<WithdrawalCommand, { type: 'ApproveWithdrawal' }>, state: WithdrawalRecord, now: string): WithdrawalEvent[] => {
  if (state.status !== 'PendingApproval') {
    throw new DomainError('WITHDRAWAL_ALREADY_PROCESSED', `Withdrawal ${state.id} is ${state.status}: it takes no more approvals`, { withdrawalId: state.id, status: state.status });
  }
  if (state.approvers.includes(command.userId)) {
    throw new DomainError('DUPLICATE_APPROVAL', `User ${command.userId} already approved withdrawal ${state.id}`, { withdrawalId: state.id, userId: command.userId });
  }
  const approvers = [...state.approvers, command.userId];
  const status = approvers.length >= state.minWithdrawalSigners ? 'Pending' : 'PendingApproval';
  return [{ type: 'WithdrawalApproved', data: { id: state.id, userId: command.userId, approvers, status, approvedAt: now } }];
};

/**
 * SPEC §3: Pending and PendingApproval can be cancelled. Once the processor recorded a signed
 * transaction the withdrawal is committed to the chain (the bytes may already be on their way):
 * cancelling then could release funds that still leave, so it is refused like Processing.
 */
const cancel = (command: Extract<WithdrawalCommand, { type: 'CancelWithdrawal' }>, state: WithdrawalRecord, now: string): WithdrawalEvent[] => {
  const cancellable = (state.status === 'Pending' || state.status === 'PendingApproval') && state.signedTransaction === null;
  if (!cancellable) {
    throw new DomainError('WITHDRAWAL_NOT_PENDING', `Withdrawal ${state.id} is ${state.status}${state.signedTransaction ? ' and already signed' : ''}: only Pending or PendingApproval can be cancelled`, {
      withdrawalId: state.id,
      status: state.status,
    });
  }
  return [{ type: 'WithdrawalCancelled', data: { id: state.id, userId: command.userId, username: command.username, txnError: `Cancelled by ${command.username}`, cancelledAt: now } }];
};

const recordSigned = (command: Extract<WithdrawalCommand, { type: 'RecordSignedTransaction' }>, state: WithdrawalRecord, now: string): WithdrawalEvent[] => {
  // the same transaction recorded again (a retry after a crash) changes nothing
  if (state.signedTransaction?.txHash === command.txHash) return [];
  if (state.status !== 'Pending' || state.signedTransaction !== null) throw outOfOrder(state, 'be signed');
  const { type: _type, id: _id, holdFee, ...signed } = command;
  return [{ type: 'WithdrawalTransactionSigned', data: { id: state.id, ...signed, ...(holdFee ? { feeHeld: command.fee } : {}), signedAt: now } }];
};

/**
 * A replacement supersedes the transaction being followed, once it is broadcast (Processing) and
 * only that one: two processors racing each build one from the same transaction, and the second
 * append fails on its revision. Recording the same replacement again changes nothing.
 */
const recordReplacement = (command: Extract<WithdrawalCommand, { type: 'RecordReplacementTransaction' }>, state: WithdrawalRecord, now: string): WithdrawalEvent[] => {
  if (state.signedTransaction?.txHash === command.txHash) return [];
  if (state.status !== 'Processing' || state.signedTransaction?.txHash !== command.replacedTxHash) throw outOfOrder(state, `replace ${command.replacedTxHash}`);
  if (BigInt(command.fee) <= BigInt(state.signedTransaction.fee)) throw new RangeError(`a replacement pays more than ${state.signedTransaction.fee}, not ${command.fee}`);
  if (command.nonce !== undefined) checkEip1559Replacement(state.signedTransaction, command);
  const { type: _type, id: _id, holdFee, ...replacement } = command;
  // the hold covers the highest fee any of its transactions may pay: whichever is mined, the ledger can charge it
  const feeHeld = holdFee ? { feeHeld: maxOf(BigInt(state.feeHeld ?? '0'), BigInt(command.fee)).toString() } : {};
  return [{ type: 'WithdrawalTransactionReplaced', data: { id: state.id, ...replacement, replacedFee: state.signedTransaction.fee, ...feeHeld, replacedAt: now } }];
};

/** EVM: the same nonce, both fee fields 10 % higher (what a node asks of a replacement), or it is a bug */
const checkEip1559Replacement = (stuck: SignedTransaction, command: Extract<WithdrawalCommand, { type: 'RecordReplacementTransaction' }>) => {
  const fees = (transaction: { maxFeePerGas?: string | undefined; maxPriorityFeePerGas?: string | undefined }) =>
    transaction.maxFeePerGas !== undefined && transaction.maxPriorityFeePerGas !== undefined
      ? { maxFeePerGas: BigInt(transaction.maxFeePerGas), maxPriorityFeePerGas: BigInt(transaction.maxPriorityFeePerGas) }
      : null;
  const before = fees(stuck);
  const after = fees(command);
  if (stuck.nonce !== command.nonce || !before || !after || !canReplace(before, after)) {
    throw new RangeError(`an EIP-1559 replacement takes nonce ${stuck.nonce} with both fee fields 10 % higher than ${stuck.maxFeePerGas}/${stuck.maxPriorityFeePerGas}`);
  }
};

/** The transactions that can complete the withdrawal: the one followed and those it replaced (they spend the same inputs: one at most confirms). */
const payingTransactions = (state: WithdrawalRecord): string[] => [
  ...(state.signedTransaction ? [state.signedTransaction.txHash] : []),
  ...(state.replacedTransactions ?? []).map((replaced) => replaced.txHash),
];

const recordBroadcast = (command: Extract<WithdrawalCommand, { type: 'RecordBroadcast' }>, state: WithdrawalRecord, now: string): WithdrawalEvent[] => {
  if (state.status === 'Processing' && state.txnHash === command.txHash) return [];
  if (state.status !== 'Pending' || state.signedTransaction?.txHash !== command.txHash) throw outOfOrder(state, `be broadcast as ${command.txHash}`);
  return [{ type: 'WithdrawalBroadcast', data: { id: state.id, txHash: command.txHash, broadcastAt: now } }];
};

/** A confirmation may be seen before the broadcast was recorded (a crash in between): signed is enough. */
const complete = (command: Extract<WithdrawalCommand, { type: 'CompleteWithdrawal' }>, state: WithdrawalRecord, now: string): WithdrawalEvent[] => {
  if (state.status === 'Completed' && state.txnHash === command.txHash) return [];
  const onChain = state.status === 'Processing' || (state.status === 'Pending' && state.signedTransaction !== null);
  if (!onChain || !payingTransactions(state).includes(command.txHash)) throw outOfOrder(state, `complete as ${command.txHash}`);
  const { txHash, blockNumber, fee } = command;
  return [{ type: 'WithdrawalCompleted', data: { id: state.id, txHash, blockNumber, fee, completedAt: now } }];
};

/** Failing takes a withdrawal that is approved (Pending, signed or not) or broadcast; never twice. */
const fail = (command: Extract<WithdrawalCommand, { type: 'FailWithdrawal' }>, state: WithdrawalRecord, now: string): WithdrawalEvent[] => {
  if (state.status === 'Failed') return [];
  if (state.status !== 'Pending' && state.status !== 'Processing') throw outOfOrder(state, 'fail');
  return [{ type: 'WithdrawalFailed', data: { id: state.id, txnError: command.txnError, failedAt: now } }];
};

/**
 * SPEC §3's state machine. Exactly one terminal event (Completed, Failed or Cancelled) per
 * withdrawal: every command refuses a terminal withdrawal, except a repeat of the processor's own
 * last step, which decides nothing (a retry after a crash).
 */
export const decideWithdrawal = (command: WithdrawalCommand, state: Withdrawal, { now }: DecideContext): WithdrawalEvent[] => {
  const at = now.toISOString();
  if (command.type === 'RequestWithdrawal') return request(command, state, at);
  const withdrawal = existing(state, command.id);
  switch (command.type) {
    case 'ApproveWithdrawal':
      return approve(command, withdrawal, at);
    case 'CancelWithdrawal':
      return cancel(command, withdrawal, at);
    case 'RecordSignedTransaction':
      return recordSigned(command, withdrawal, at);
    case 'RecordBroadcast':
      return recordBroadcast(command, withdrawal, at);
    case 'RecordReplacementTransaction':
      return recordReplacement(command, withdrawal, at);
    case 'CompleteWithdrawal':
      return complete(command, withdrawal, at);
    case 'FailWithdrawal':
      return fail(command, withdrawal, at);
    default: {
      const _never: never = command;
      throw new Error('unknown withdrawal command');
    }
  }
};

export const withdrawalDecider: Decider<WithdrawalCommand, WithdrawalEvent, Withdrawal> = {
  initialState: initialWithdrawal,
  evolve: evolveWithdrawal,
  decide: decideWithdrawal,
};
