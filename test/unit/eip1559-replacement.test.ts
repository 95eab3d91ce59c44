import { describe, expect, it } from 'vitest';
import { bumpedEip1559Fees, canReplace, replacementFloor } from '../../src/domain/withdrawal/eip1559-replacement.js';
import { withdrawalDecider, type WithdrawalCommand } from '../../src/domain/withdrawal/decide.js';
import type { WithdrawalEvent } from '../../src/domain/withdrawal/withdrawal.js';
import { bitcoinWithdrawalRequested } from '../support/withdrawal-events.js';
import { NOW, specFor } from '../support/given-when-then.js';

const GWEI = 10n ** 9n;

describe('the EIP-1559 replacement rule', () => {
  it('the floor is 10 % above, rounded up', () => {
    expect(replacementFloor(100n)).toBe(110n);
    expect(replacementFloor(101n)).toBe(112n); // 111.1 → 112
    expect(replacementFloor(0n)).toBe(0n);
  });

  it('a replacement raises both fields by 10 % at least, to the market when it asks more', () => {
    const stuck = { maxFeePerGas: 20n * GWEI, maxPriorityFeePerGas: 1n * GWEI };
    expect(bumpedEip1559Fees(stuck, { maxFeePerGas: 10n * GWEI, maxPriorityFeePerGas: 1n * GWEI })).toEqual({ maxFeePerGas: 22n * GWEI, maxPriorityFeePerGas: 1_100_000_000n });
    expect(bumpedEip1559Fees(stuck, { maxFeePerGas: 60n * GWEI, maxPriorityFeePerGas: 2n * GWEI })).toEqual({ maxFeePerGas: 60n * GWEI, maxPriorityFeePerGas: 2n * GWEI });
  });

  it('the fee cap bounds it: capped when the market asks more, none when even the floor is above the cap', () => {
    const stuck = { maxFeePerGas: 20n * GWEI, maxPriorityFeePerGas: 1n * GWEI };
    expect(bumpedEip1559Fees(stuck, { maxFeePerGas: 60n * GWEI, maxPriorityFeePerGas: 2n * GWEI }, 30n * GWEI)).toEqual({ maxFeePerGas: 30n * GWEI, maxPriorityFeePerGas: 2n * GWEI });
    expect(bumpedEip1559Fees(stuck, { maxFeePerGas: 60n * GWEI, maxPriorityFeePerGas: 2n * GWEI }, 21n * GWEI)).toBeNull();
  });

  it('a tip above the fee cap is not a replacement a node takes', () => {
    expect(canReplace({ maxFeePerGas: 10n, maxPriorityFeePerGas: 10n }, { maxFeePerGas: 11n, maxPriorityFeePerGas: 11n })).toBe(true);
    expect(canReplace({ maxFeePerGas: 10n, maxPriorityFeePerGas: 10n }, { maxFeePerGas: 11n, maxPriorityFeePerGas: 10n })).toBe(false);
    expect(canReplace({ maxFeePerGas: 10n, maxPriorityFeePerGas: 1n }, { maxFeePerGas: 11n, maxPriorityFeePerGas: 12n })).toBe(false);
  });
});

describe('withdrawal decider: an EVM replacement', () => {
  const given = specFor(withdrawalDecider);
  const id = 'w1';
  const at = NOW.toISOString();
  const requested = bitcoinWithdrawalRequested(id);
  const signed: WithdrawalEvent = {
    type: 'WithdrawalTransactionSigned',
    data: { id, raw: '0x01', txHash: '0xa', nonce: 7, fee: '420000', signedAt: at, headBlockNumber: 100, maxFeePerGas: '20', maxPriorityFeePerGas: '2' },
  };
  const broadcast: WithdrawalEvent = { type: 'WithdrawalBroadcast', data: { id, txHash: '0xa', broadcastAt: at } };
  const replace = (overrides: Partial<Extract<WithdrawalCommand, { type: 'RecordReplacementTransaction' }>> = {}): WithdrawalCommand => ({
    type: 'RecordReplacementTransaction',
    id,
    raw: '0x02',
    txHash: '0xb',
    replacedTxHash: '0xa',
    fee: '462000',
    headBlockNumber: 106,
    nonce: 7,
    maxFeePerGas: '22',
    maxPriorityFeePerGas: '3',
    ...overrides,
  });

  it('the same nonce with both fields 10 % higher replaces it; either then completes the withdrawal', () => {
    given([requested, signed, broadcast])
      .when(replace())
      .then([
        {
          type: 'WithdrawalTransactionReplaced',
          data: { id, raw: '0x02', txHash: '0xb', replacedTxHash: '0xa', fee: '462000', replacedFee: '420000', headBlockNumber: 106, nonce: 7, maxFeePerGas: '22', maxPriorityFeePerGas: '3', replacedAt: at },
        },
      ]);
    const replaced = withdrawalDecider.decide(replace(), [requested, signed, broadcast].reduce(withdrawalDecider.evolve, withdrawalDecider.initialState), { now: NOW });
    const history = [requested, signed, broadcast, ...replaced];
    expect(history.reduce(withdrawalDecider.evolve, withdrawalDecider.initialState)).toMatchObject({
      txnHash: '0xb',
      signedTransaction: { txHash: '0xb', nonce: 7, maxFeePerGas: '22', maxPriorityFeePerGas: '3' },
      replacedTransactions: [{ txHash: '0xa', nonce: 7 }],
    });
    for (const [txHash, fee] of [['0xa', '21000'], ['0xb', '23100']] as const) {
      given(history).when({ type: 'CompleteWithdrawal', id, txHash, blockNumber: 110, fee }).then([{ type: 'WithdrawalCompleted', data: { id, txHash, blockNumber: 110, fee, completedAt: at } }]);
    }
  });

  it('another nonce, or a field raised by less than 10 %, is refused', () => {
    const state = [requested, signed, broadcast].reduce(withdrawalDecider.evolve, withdrawalDecider.initialState);
    expect(() => withdrawalDecider.decide(replace({ nonce: 8 }), state, { now: NOW })).toThrow(RangeError);
    expect(() => withdrawalDecider.decide(replace({ maxFeePerGas: '21', fee: '441000' }), state, { now: NOW })).toThrow(RangeError);
    expect(() => withdrawalDecider.decide(replace({ maxPriorityFeePerGas: '2' }), state, { now: NOW })).toThrow(RangeError);
  });
});
