import type { DecideContext, Decider, DomainEvent } from '../decider.js';
import type { WithdrawalCommand } from '../withdrawal/decide.js';
import type { PayoutBatchRef, SpentOutput } from '../withdrawal/withdrawal.js';

/** A withdrawal a batch pays: its output in the transaction. */
export type PayoutBatchMember = { id: string; outputIndex: number; recipient: string; amount: string };

/** One transaction of a batch (the first, or a replacement by fee): what it spends, its fee and each withdrawal's share of it. */
export type PayoutBatchTransaction = {
  raw: string;
  txHash: string;
  /** the whole transaction's fee, sat */
  fee: string;
  /** each withdrawal's share of the fee, in the order of `withdrawals`; they add up to `fee` */
  shares: string[];
  headBlockNumber: number;
  inputs: SpentOutput[];
};

/**
 * Events of `payoutBatch-<chainId>-<batchId>` (Bitcoin): one transaction paying many withdrawals
 * of one organization, recorded before it is sent in the same append as each withdrawal's
 * `WithdrawalTransactionSigned`; a replacement by fee, likewise with each `WithdrawalTransactionReplaced`.
 */
export type PayoutBatchEvent =
  | DomainEvent<'PayoutBatchSigned', PayoutBatchTransaction & { batchId: string; orgId: string; chainId: string; tokenId: string; withdrawals: PayoutBatchMember[]; signedAt: string }>
  | DomainEvent<'PayoutBatchReplaced', PayoutBatchTransaction & { batchId: string; replacedTxHash: string; replacedFee: string; replacedAt: string }>;

export type PayoutBatch =
  | { status: 'None' }
  | { status: 'Signed'; batchId: string; orgId: string; chainId: string; tokenId: string; withdrawals: PayoutBatchMember[]; current: PayoutBatchTransaction; replaced: PayoutBatchTransaction[] };

export type PayoutBatchCommand =
  | { type: 'RecordPayoutBatch'; batchId: string; orgId: string; chainId: string; tokenId: string; withdrawals: PayoutBatchMember[]; transaction: PayoutBatchTransaction }
  | { type: 'RecordPayoutBatchReplacement'; batchId: string; replacedTxHash: string; transaction: PayoutBatchTransaction };

const transactionOf = ({ raw, txHash, fee, shares, headBlockNumber, inputs }: PayoutBatchTransaction): PayoutBatchTransaction => ({ raw, txHash, fee, shares, headBlockNumber, inputs });

export const evolvePayoutBatch = (state: PayoutBatch, event: PayoutBatchEvent): PayoutBatch => {
  switch (event.type) {
    case 'PayoutBatchSigned': {
      const { batchId, orgId, chainId, tokenId, withdrawals } = event.data;
      return { status: 'Signed', batchId, orgId, chainId, tokenId, withdrawals, current: transactionOf(event.data), replaced: [] };
    }
    case 'PayoutBatchReplaced':
      if (state.status === 'None') return state;
      return { ...state, current: transactionOf(event.data), replaced: [...state.replaced, state.current] };
  }
};

const sum = (amounts: readonly string[]) => amounts.reduce((total, amount) => total + BigInt(amount), 0n);

/** the shares name every withdrawal once and add up to the fee, or it is a bug: nothing is recorded */
const checkShares = (transaction: PayoutBatchTransaction, withdrawals: number) => {
  if (transaction.shares.length !== withdrawals) throw new RangeError(`a batch of ${withdrawals} withdrawals has ${transaction.shares.length} fee shares`);
  if (sum(transaction.shares) !== BigInt(transaction.fee)) throw new RangeError(`the fee shares add up to ${sum(transaction.shares)}, not the fee ${transaction.fee}`);
};

const record = (command: Extract<PayoutBatchCommand, { type: 'RecordPayoutBatch' }>, state: PayoutBatch, now: string): PayoutBatchEvent[] => {
  if (state.status !== 'None') {
    if (state.current.txHash === command.transaction.txHash) return []; // the same record again (a retry)
    throw new RangeError(`payout batch ${command.batchId} is recorded already`);
  }
  const ids = new Set(command.withdrawals.map((withdrawal) => withdrawal.id));
  if (ids.size === 0 || ids.size !== command.withdrawals.length) throw new RangeError('a payout batch pays one or more withdrawals, each once');
  checkShares(command.transaction, command.withdrawals.length);
  const { type: _type, transaction, ...batch } = command;
  return [{ type: 'PayoutBatchSigned', data: { ...batch, ...transactionOf(transaction), signedAt: now } }];
};

/**
 * A replacement takes the place of the transaction being followed, and only that one: two
 * processors racing each build one from it, and the second append fails on its revision. It pays
 * more in all, and every withdrawal's share rises (what a withdrawal's own replacement asks).
 */
const replace = (command: Extract<PayoutBatchCommand, { type: 'RecordPayoutBatchReplacement' }>, state: PayoutBatch, now: string): PayoutBatchEvent[] => {
  if (state.status === 'None') throw new RangeError(`no payout batch ${command.batchId}`);
  if (state.current.txHash === command.transaction.txHash) return [];
  if (state.current.txHash !== command.replacedTxHash) throw new RangeError(`payout batch ${state.batchId} follows ${state.current.txHash}, not ${command.replacedTxHash}`);
  checkShares(command.transaction, state.withdrawals.length);
  const risen = command.transaction.shares.every((share, index) => BigInt(share) > BigInt(state.current.shares[index]!));
  if (!risen) throw new RangeError(`a replacement raises every withdrawal's share of the fee (${state.current.shares.join(', ')} → ${command.transaction.shares.join(', ')})`);
  return [{ type: 'PayoutBatchReplaced', data: { batchId: state.batchId, ...transactionOf(command.transaction), replacedTxHash: command.replacedTxHash, replacedFee: state.current.fee, replacedAt: now } }];
};

export const decidePayoutBatch = (command: PayoutBatchCommand, state: PayoutBatch, { now }: DecideContext): PayoutBatchEvent[] => {
  const at = now.toISOString();
  switch (command.type) {
    case 'RecordPayoutBatch':
      return record(command, state, at);
    case 'RecordPayoutBatchReplacement':
      return replace(command, state, at);
  }
};

export const payoutBatchDecider: Decider<PayoutBatchCommand, PayoutBatchEvent, PayoutBatch> = {
  initialState: { status: 'None' },
  evolve: evolvePayoutBatch,
  decide: decidePayoutBatch,
};

/**
 * What each withdrawal's stream records of one of the batch's transactions: the transaction, its
 * share as its fee, held beside its amount (the organization's balance pays Bitcoin's fee), and the batch.
 */
const recordedFor = (batchId: string, withdrawals: readonly PayoutBatchMember[], transaction: PayoutBatchTransaction) => {
  const { raw, txHash, shares, headBlockNumber, inputs } = transaction;
  return withdrawals.map((withdrawal, index) => {
    const batch: PayoutBatchRef = { id: batchId, fee: transaction.fee, size: withdrawals.length, outputIndex: withdrawal.outputIndex };
    return { id: withdrawal.id, raw, txHash, fee: shares[index]!, headBlockNumber, inputs, holdFee: true, batch };
  });
};

/** The withdrawals' commands that go in the same append as a `PayoutBatchSigned`, in the batch's order. */
export const signedWithdrawalCommands = (command: Extract<PayoutBatchCommand, { type: 'RecordPayoutBatch' }>): Extract<WithdrawalCommand, { type: 'RecordSignedTransaction' }>[] =>
  recordedFor(command.batchId, command.withdrawals, command.transaction).map((recorded) => ({ type: 'RecordSignedTransaction', ...recorded, nonce: null }));

/** The withdrawals' commands that go in the same append as a `PayoutBatchReplaced` (each raising its hold to its new share). */
export const replacedWithdrawalCommands = (
  batch: Extract<PayoutBatch, { status: 'Signed' }>,
  command: Extract<PayoutBatchCommand, { type: 'RecordPayoutBatchReplacement' }>,
): Extract<WithdrawalCommand, { type: 'RecordReplacementTransaction' }>[] =>
  recordedFor(batch.batchId, batch.withdrawals, command.transaction).map((recorded) => ({ type: 'RecordReplacementTransaction', ...recorded, replacedTxHash: command.replacedTxHash }));
