import { describe, expect, it } from 'vitest';
import { fold } from '../../src/domain/decider.js';
import { withdrawalDecider, type WithdrawalCommand } from '../../src/domain/withdrawal/decide.js';
import type { WithdrawalEvent } from '../../src/domain/withdrawal/withdrawal.js';
import { bitcoinWithdrawalRequested } from '../support/withdrawal-events.js';
import { NOW, specFor } from '../support/given-when-then.js';

const given = specFor(withdrawalDecider);
const at = NOW.toISOString();
const id = 'w1';
const inputs = [{ txHash: 'aa'.repeat(32), index: 0, address: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', amount: '125000' }];

const requested = bitcoinWithdrawalRequested(id);
const signed: WithdrawalEvent = { type: 'WithdrawalTransactionSigned', data: { id, raw: 'r1', txHash: 'h1', nonce: null, fee: '1410', signedAt: at, headBlockNumber: 100, inputs } };
const broadcast: WithdrawalEvent = { type: 'WithdrawalBroadcast', data: { id, txHash: 'h1', broadcastAt: at } };
const replaced: WithdrawalEvent = {
  type: 'WithdrawalTransactionReplaced',
  data: { id, raw: 'r2', txHash: 'h2', replacedTxHash: 'h1', fee: '1551', replacedFee: '1410', headBlockNumber: 106, inputs, replacedAt: at },
};
const replace = (overrides: Partial<Extract<WithdrawalCommand, { type: 'RecordReplacementTransaction' }>> = {}): WithdrawalCommand => ({
  type: 'RecordReplacementTransaction',
  id,
  raw: 'r2',
  txHash: 'h2',
  replacedTxHash: 'h1',
  fee: '1551',
  headBlockNumber: 106,
  inputs,
  ...overrides,
});
const completeAs = (txHash: string, fee: string): WithdrawalCommand => ({ type: 'CompleteWithdrawal', id, txHash, blockNumber: 110, fee });

describe('withdrawal decider: a Bitcoin replacement', () => {
  it('replaces the broadcast transaction being followed; the state follows the replacement, the replaced one kept', () => {
    given([requested, signed, broadcast]).when(replace()).then([replaced]);
    const state = fold(withdrawalDecider, [requested, signed, broadcast, replaced]);
    expect(state).toMatchObject({
      status: 'Processing',
      txnHash: 'h2',
      signedTransaction: { raw: 'r2', txHash: 'h2', fee: '1551', headBlockNumber: 106, nonce: null },
      replacedTransactions: [{ raw: 'r1', txHash: 'h1', fee: '1410', headBlockNumber: 100 }],
    });
  });

  it('the same replacement again decides nothing; a replacement of another transaction, before the broadcast, or paying no more is refused', () => {
    given([requested, signed, broadcast, replaced]).when(replace()).then([]);
    given([requested, signed, broadcast, replaced]).when(replace({ txHash: 'h3' })).thenThrows('WITHDRAWAL_ALREADY_PROCESSED'); // h1 is no longer the one followed
    given([requested, signed]).when(replace()).thenThrows('WITHDRAWAL_ALREADY_PROCESSED');
    expect(() => withdrawalDecider.decide(replace({ fee: '1410' }), fold(withdrawalDecider, [requested, signed, broadcast]), { now: NOW })).toThrow(RangeError);
  });

  it('either transaction confirming completes the withdrawal, with its own hash and fee; another hash does not', () => {
    const history = [requested, signed, broadcast, replaced];
    given(history).when(completeAs('h2', '1551')).then([{ type: 'WithdrawalCompleted', data: { id, txHash: 'h2', blockNumber: 110, fee: '1551', completedAt: at } }]);
    given(history).when(completeAs('h1', '1410')).then([{ type: 'WithdrawalCompleted', data: { id, txHash: 'h1', blockNumber: 110, fee: '1410', completedAt: at } }]);
    expect(fold(withdrawalDecider, [...history, { type: 'WithdrawalCompleted', data: { id, txHash: 'h1', blockNumber: 110, fee: '1410', completedAt: at } }])).toMatchObject({ status: 'Completed', txnHash: 'h1', fee: '1410' });
    given(history).when(completeAs('h9', '1')).thenThrows('WITHDRAWAL_ALREADY_PROCESSED');
  });
});
