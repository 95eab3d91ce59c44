import { describe, expect, it } from 'vitest';
import { fold } from '../../src/domain/decider.js';
import { withdrawalDecider, type WithdrawalCommand } from '../../src/domain/withdrawal/decide.js';
import type { WithdrawalEvent } from '../../src/domain/withdrawal/withdrawal.js';
import { NOW, specFor } from '../support/given-when-then.js';

const given = specFor(withdrawalDecider);
const at = NOW.toISOString();
const id = 'w1';

const request = (minWithdrawalSigners: number) => ({
  id,
  orgId: 'o1',
  chainId: 'eip155:1',
  tokenId: 'eip155:1/slip44:60',
  amount: '1000',
  recipient: '0x00000000000000000000000000000000000000b2',
  memo: null,
  reference: 'ref-1',
  internalNote: '',
  externalUserId: null,
  initiator: 'u1',
  minWithdrawalSigners,
});

const requested = (minWithdrawalSigners: number): WithdrawalEvent => ({
  type: 'WithdrawalRequested',
  data: { ...request(minWithdrawalSigners), status: minWithdrawalSigners > 1 ? 'PendingApproval' : 'Pending', requestedAt: at },
});
const approved = (userId: string, approvers: string[], status: 'Pending' | 'PendingApproval'): WithdrawalEvent => ({
  type: 'WithdrawalApproved',
  data: { id, userId, approvers, status, approvedAt: at },
});
const cancelled: WithdrawalEvent = { type: 'WithdrawalCancelled', data: { id, userId: 'u2', username: 'bob', txnError: 'Cancelled by bob', cancelledAt: at } };
const signed: WithdrawalEvent = { type: 'WithdrawalTransactionSigned', data: { id, raw: '0xraw', txHash: '0xabc', nonce: 7, fee: '42', signedAt: at } };
const broadcast: WithdrawalEvent = { type: 'WithdrawalBroadcast', data: { id, txHash: '0xabc', broadcastAt: at } };
const completed: WithdrawalEvent = { type: 'WithdrawalCompleted', data: { id, txHash: '0xabc', blockNumber: 12, fee: '42', completedAt: at } };
const failed: WithdrawalEvent = { type: 'WithdrawalFailed', data: { id, txnError: 'reverted', failedAt: at } };

const approve = (userId: string): WithdrawalCommand => ({ type: 'ApproveWithdrawal', id, userId });
const cancel: WithdrawalCommand = { type: 'CancelWithdrawal', id, userId: 'u2', username: 'bob' };
const sign: WithdrawalCommand = { type: 'RecordSignedTransaction', id, raw: '0xraw', txHash: '0xabc', nonce: 7, fee: '42' };
const recordBroadcast: WithdrawalCommand = { type: 'RecordBroadcast', id, txHash: '0xabc' };
const complete: WithdrawalCommand = { type: 'CompleteWithdrawal', id, txHash: '0xabc', blockNumber: 12, fee: '42' };
const fail: WithdrawalCommand = { type: 'FailWithdrawal', id, txnError: 'reverted' };

describe('withdrawal decider: creation and approvals', () => {
  it('one signer: Pending at once, the initiator is the approver', () => {
    given([]).when({ type: 'RequestWithdrawal', ...request(1) }).then([requested(1)]);
    expect(fold(withdrawalDecider, [requested(1)])).toMatchObject({ status: 'Pending', approvers: ['u1'], approvedAt: at, txnHash: null, txnError: null });
  });

  it('more signers: PendingApproval with only the initiator approving', () => {
    given([]).when({ type: 'RequestWithdrawal', ...request(2) }).then([requested(2)]);
    expect(fold(withdrawalDecider, [requested(2)])).toMatchObject({ status: 'PendingApproval', approvers: ['u1'], approvedAt: null });
  });

  it('an approval that reaches minWithdrawalSigners makes it Pending', () => {
    given([requested(2)]).when(approve('u2')).then([approved('u2', ['u1', 'u2'], 'Pending')]);
  });

  it('an approval short of the threshold keeps it PendingApproval', () => {
    given([requested(3)]).when(approve('u2')).then([approved('u2', ['u1', 'u2'], 'PendingApproval')]);
    given([requested(3), approved('u2', ['u1', 'u2'], 'PendingApproval')]).when(approve('u3')).then([approved('u3', ['u1', 'u2', 'u3'], 'Pending')]);
  });

  it('the same user approving twice (the initiator included) is DUPLICATE_APPROVAL', () => {
    given([requested(3), approved('u2', ['u1', 'u2'], 'PendingApproval')]).when(approve('u2')).thenThrows('DUPLICATE_APPROVAL', { withdrawalId: id, userId: 'u2' });
    given([requested(2)]).when(approve('u1')).thenThrows('DUPLICATE_APPROVAL');
  });

  it('an approval outside PendingApproval is WITHDRAWAL_ALREADY_PROCESSED', () => {
    given([requested(1)]).when(approve('u2')).thenThrows('WITHDRAWAL_ALREADY_PROCESSED', { withdrawalId: id, status: 'Pending' });
    given([requested(2), cancelled]).when(approve('u2')).thenThrows('WITHDRAWAL_ALREADY_PROCESSED', { withdrawalId: id, status: 'Cancelled' });
    given([requested(2), approved('u2', ['u1', 'u2'], 'Pending')]).when(approve('u3')).thenThrows('WITHDRAWAL_ALREADY_PROCESSED');
  });

  it('a withdrawal that does not exist is WITHDRAWAL_NOT_FOUND for every command', () => {
    for (const command of [approve('u2'), cancel, sign, recordBroadcast, complete, fail]) given([]).when(command).thenThrows('WITHDRAWAL_NOT_FOUND', { withdrawalId: id });
  });
});

describe('withdrawal decider: cancellation', () => {
  it('cancels PendingApproval and Pending, naming the user', () => {
    given([requested(2)]).when(cancel).then([cancelled]);
    given([requested(1)]).when(cancel).then([cancelled]);
    expect(fold(withdrawalDecider, [requested(1), cancelled])).toMatchObject({ status: 'Cancelled', txnError: 'Cancelled by bob', cancelledBy: 'u2' });
  });

  it('refuses once the transaction is signed, broadcast, or the withdrawal ended', () => {
    given([requested(1), signed]).when(cancel).thenThrows('WITHDRAWAL_NOT_PENDING', { withdrawalId: id, status: 'Pending' });
    given([requested(1), signed, broadcast]).when(cancel).thenThrows('WITHDRAWAL_NOT_PENDING', { withdrawalId: id, status: 'Processing' });
    given([requested(1), signed, broadcast, completed]).when(cancel).thenThrows('WITHDRAWAL_NOT_PENDING');
    given([requested(1), failed]).when(cancel).thenThrows('WITHDRAWAL_NOT_PENDING');
    given([requested(1), cancelled]).when(cancel).thenThrows('WITHDRAWAL_NOT_PENDING', { withdrawalId: id, status: 'Cancelled' });
  });
});

describe('withdrawal decider: the processor', () => {
  it('signs, broadcasts (Processing) and completes a Pending withdrawal', () => {
    given([requested(1)]).when(sign).then([signed]);
    given([requested(1), signed]).when(recordBroadcast).then([broadcast]);
    given([requested(1), signed, broadcast]).when(complete).then([completed]);
    expect(fold(withdrawalDecider, [requested(1), signed])).toMatchObject({ status: 'Pending', txnHash: null, signedTransaction: { txHash: '0xabc', nonce: 7 } });
    expect(fold(withdrawalDecider, [requested(1), signed, broadcast])).toMatchObject({ status: 'Processing', txnHash: '0xabc' });
    expect(fold(withdrawalDecider, [requested(1), signed, broadcast, completed])).toMatchObject({ status: 'Completed', txnHash: '0xabc', blockNumber: 12, fee: '42', completedAt: at });
  });

  it('completes a signed withdrawal whose broadcast was never recorded (a crash in between)', () => {
    given([requested(1), signed]).when(complete).then([completed]);
  });

  it('repeating the last step decides nothing', () => {
    given([requested(1), signed]).when(sign).then([]);
    given([requested(1), signed, broadcast]).when(recordBroadcast).then([]);
    given([requested(1), signed, broadcast, completed]).when(complete).then([]);
    given([requested(1), failed]).when(fail).then([]);
  });

  it('refuses steps out of order', () => {
    given([requested(2)]).when(sign).thenThrows('WITHDRAWAL_ALREADY_PROCESSED', { withdrawalId: id, status: 'PendingApproval' });
    given([requested(1)]).when(recordBroadcast).thenThrows('WITHDRAWAL_ALREADY_PROCESSED');
    given([requested(1), signed]).when({ ...sign, txHash: '0xother' }).thenThrows('WITHDRAWAL_ALREADY_PROCESSED');
    given([requested(1), signed]).when({ ...recordBroadcast, txHash: '0xother' }).thenThrows('WITHDRAWAL_ALREADY_PROCESSED');
    given([requested(1)]).when(complete).thenThrows('WITHDRAWAL_ALREADY_PROCESSED');
    given([requested(1), cancelled]).when(sign).thenThrows('WITHDRAWAL_ALREADY_PROCESSED', { withdrawalId: id, status: 'Cancelled' });
  });

  it('fails a Pending (signed or not) or Processing withdrawal, never PendingApproval', () => {
    given([requested(1)]).when(fail).then([failed]);
    given([requested(1), signed]).when(fail).then([failed]);
    given([requested(1), signed, broadcast]).when(fail).then([failed]);
    given([requested(2)]).when(fail).thenThrows('WITHDRAWAL_ALREADY_PROCESSED');
    expect(fold(withdrawalDecider, [requested(1), signed, broadcast, failed])).toMatchObject({ status: 'Failed', txnError: 'reverted', txnHash: '0xabc' });
  });

  it('exactly one terminal event: nothing moves a Completed, Failed or Cancelled withdrawal to another end', () => {
    given([requested(1), signed, broadcast, completed]).when(fail).thenThrows('WITHDRAWAL_ALREADY_PROCESSED', { withdrawalId: id, status: 'Completed' });
    given([requested(1), signed, broadcast, failed]).when(complete).thenThrows('WITHDRAWAL_ALREADY_PROCESSED', { withdrawalId: id, status: 'Failed' });
    given([requested(1), cancelled]).when(fail).thenThrows('WITHDRAWAL_ALREADY_PROCESSED');
    given([requested(1), cancelled]).when(complete).thenThrows('WITHDRAWAL_ALREADY_PROCESSED');
  });
});

describe('the record a request starts', () => {
  it('carries every field of the request (but its time, kept as createdAt) and in the same order', () => {
    const event = requested(2);
    const state = fold(withdrawalDecider, [event]);
    const { requestedAt, ...carried } = event.type === 'WithdrawalRequested' ? event.data : ({} as never);
    expect(Object.keys(state).slice(0, Object.keys(carried).length)).toEqual(Object.keys(carried));
    expect(state).toMatchObject({ ...carried, createdAt: requestedAt, updatedAt: requestedAt, approvers: [carried.initiator] });
  });
});
