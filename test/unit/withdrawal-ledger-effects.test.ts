import { describe, expect, it } from 'vitest';
import { fold } from '../../src/domain/decider.js';
import { withdrawalDecider, type WithdrawalCommand } from '../../src/domain/withdrawal/decide.js';
import { ledgerCommandsFor } from '../../src/domain/withdrawal/ledger-effects.js';
import type { WithdrawalEvent } from '../../src/domain/withdrawal/withdrawal.js';
import { bitcoinWithdrawalRequested } from '../support/withdrawal-events.js';
import { NOW } from '../support/given-when-then.js';

const at = NOW.toISOString();
const id = 'w1';
const ledger = { orgId: 'o1', tokenId: 'bip122:000000000019d6689c085ae165831e93/slip44:0', withdrawalId: id };
const requested = bitcoinWithdrawalRequested(id);
/** recorded before fees were held: no feeHeld */
const signedBefore: WithdrawalEvent = { type: 'WithdrawalTransactionSigned', data: { id, raw: 'r1', txHash: 'h1', nonce: null, fee: '1410', signedAt: at, headBlockNumber: 100, inputs: [] } };
const broadcast: WithdrawalEvent = { type: 'WithdrawalBroadcast', data: { id, txHash: 'h1', broadcastAt: at } };

/** decides the command on the history and says what its events do to the ledger */
const effectOf = (history: WithdrawalEvent[], command: WithdrawalCommand) => {
  const state = fold(withdrawalDecider, history);
  const events = withdrawalDecider.decide(command, state, { now: NOW });
  return { events, ledger: ledgerCommandsFor(state, events) };
};
const sign = (holdFee: boolean): WithdrawalCommand => ({ type: 'RecordSignedTransaction', id, raw: 'r1', txHash: 'h1', nonce: null, fee: '1410', headBlockNumber: 100, inputs: [], holdFee });
const replace = (fee: string): WithdrawalCommand => ({ type: 'RecordReplacementTransaction', id, raw: 'r2', txHash: 'h2', replacedTxHash: 'h1', fee, headBlockNumber: 106, inputs: [], holdFee: true });
const complete = (txHash: string, fee: string): WithdrawalCommand => ({ type: 'CompleteWithdrawal', id, txHash, blockNumber: 110, fee });
const failed: WithdrawalCommand = { type: 'FailWithdrawal', id, txnError: 'boom' };

describe('a withdrawal’s ledger effects: the fee held beside the amount (Bitcoin, XRP)', () => {
  it('signing with the fee held holds the fee; without (EVM, Tron) holds nothing more', () => {
    const held = effectOf([requested], sign(true));
    expect(held.events[0]).toMatchObject({ type: 'WithdrawalTransactionSigned', data: { feeHeld: '1410' } });
    expect(held.ledger).toEqual([{ type: 'HoldFunds', ...ledger, amount: 1410n }]);
    const notHeld = effectOf([requested], sign(false));
    expect(notHeld.events[0]!.data).not.toHaveProperty('feeHeld');
    expect(notHeld.ledger).toEqual([]);
  });

  it('completing posts the amount and releases the fee held (the caller charges the fee the chain took)', () => {
    const history = [requested, ...effectOf([requested], sign(true)).events, broadcast];
    expect(effectOf(history, complete('h1', '1410')).ledger).toEqual([
      { type: 'PostHold', ...ledger, amount: 60000n },
      { type: 'ReleaseHold', ...ledger, amount: 1410n },
    ]);
  });

  it('failing releases the amount and the fee held', () => {
    const history = [requested, ...effectOf([requested], sign(true)).events, broadcast];
    expect(effectOf(history, failed).ledger).toEqual([{ type: 'ReleaseHold', ...ledger, amount: 61410n }]);
  });

  it('a replacement paying more raises the hold by the difference; whichever is mined, the whole fee held is released', () => {
    const history = [requested, ...effectOf([requested], sign(true)).events, broadcast];
    const replaced = effectOf(history, replace('1551'));
    expect(replaced.events[0]).toMatchObject({ type: 'WithdrawalTransactionReplaced', data: { feeHeld: '1551' } });
    expect(replaced.ledger).toEqual([{ type: 'HoldFunds', ...ledger, amount: 141n }]);
    const after = [...history, ...replaced.events];
    expect(fold(withdrawalDecider, after)).toMatchObject({ feeHeld: '1551' });
    expect(effectOf(after, complete('h1', '1410')).ledger).toEqual([
      { type: 'PostHold', ...ledger, amount: 60000n },
      { type: 'ReleaseHold', ...ledger, amount: 1551n },
    ]);
  });

  it('a withdrawal signed before fees were held keeps its old meaning: the amount alone is held, posted or released', () => {
    const history = [requested, signedBefore, broadcast];
    expect(fold(withdrawalDecider, history)).not.toHaveProperty('feeHeld');
    expect(effectOf(history, complete('h1', '1410')).ledger).toEqual([{ type: 'PostHold', ...ledger, amount: 60000n }]);
    expect(effectOf(history, failed).ledger).toEqual([{ type: 'ReleaseHold', ...ledger, amount: 60000n }]);
    // replaced under the new rule: the replacement's whole fee is held from then on
    const replaced = effectOf(history, replace('1551'));
    expect(replaced.ledger).toEqual([{ type: 'HoldFunds', ...ledger, amount: 1551n }]);
    expect(effectOf([...history, ...replaced.events], failed).ledger).toEqual([{ type: 'ReleaseHold', ...ledger, amount: 61551n }]);
  });

  it('cancelling (never signed) releases the amount', () => {
    expect(effectOf([requested], { type: 'CancelWithdrawal', id, userId: 'u1', username: 'alice' }).ledger).toEqual([{ type: 'ReleaseHold', ...ledger, amount: 60000n }]);
  });
});
