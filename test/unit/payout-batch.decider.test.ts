import { describe, expect, it } from 'vitest';
import { p2wpkhVirtualSize, planBitcoinPayouts } from '../../src/chains/bitcoin/spend-planning.js';
import { shareFeeByOutputs, shareFeeEqually } from '../../src/domain/payout-batch/fee-shares.js';
import { decidePayoutBatch, evolvePayoutBatch, payoutBatchDecider, signedWithdrawalCommands, type PayoutBatchCommand } from '../../src/domain/payout-batch/payout-batch.js';

const now = new Date('2026-11-26T06:00:00.000Z');
const sum = (amounts: readonly bigint[]) => amounts.reduce((total, amount) => total + amount, 0n);

describe('payout batch fee shares', () => {
  it('add up to the fee exactly, whatever the rounding', () => {
    for (const fee of [0n, 1n, 99n, 33_461n, 1_000_003n]) {
      for (const outputs of [[31], [31, 31, 31], [31, 43, 34, 32], Array.from({ length: 100 }, () => 31)]) {
        const virtualSize = 11 + 68 * 3 + outputs.reduce((total, bytes) => total + bytes, 0) + 31;
        expect(sum(shareFeeByOutputs(fee, outputs, virtualSize))).toBe(fee);
      }
      expect(sum(shareFeeEqually(fee, 7))).toBe(fee);
    }
  });

  it('each pays its own output and an equal share of the rest: a larger output pays more; one alone pays it all', () => {
    const [p2wpkh, p2tr] = shareFeeByOutputs(10n * 200n, [31, 43], 200);
    // common part 200 - 74 = 126 vB, 63 each: 94 and 106 vB at 10 sat/vB
    expect([p2wpkh, p2tr]).toEqual([940n, 1_060n]);
    expect(shareFeeByOutputs(1_234n, [31], 141)).toEqual([1_234n]);
  });

  it('a higher fee (a replacement) raises every share', () => {
    const outputs = Array.from({ length: 100 }, (_, index) => (index % 3 === 0 ? 43 : 31));
    const virtualSize = 11 + 68 * 5 + outputs.reduce((total, bytes) => total + bytes, 0) + 31;
    const before = shareFeeByOutputs(BigInt(virtualSize) * 10n, outputs, virtualSize);
    const after = shareFeeByOutputs(BigInt(virtualSize) * 11n, outputs, virtualSize);
    after.forEach((share, index) => expect(share).toBeGreaterThan(before[index]!));
  });

  it('refuses what cannot be shared', () => {
    expect(() => shareFeeByOutputs(100n, [], 100)).toThrow(RangeError);
    expect(() => shareFeeByOutputs(100n, [80, 80], 100)).toThrow(RangeError);
    expect(() => shareFeeEqually(100n, 0)).toThrow(RangeError);
  });
});

describe('planBitcoinPayouts', () => {
  const output = (amount: bigint, index: number) => ({ txHash: 'a'.repeat(64), index, amount, wallet: `w${index}` });
  it('one output per payment in order, then the change; the fee counts every output', () => {
    const payments = [{ recipient: 'r1', amount: 50_000n }, { recipient: 'r2', amount: 60_000n }, { recipient: 'r3', amount: 70_000n }];
    const plan = planBitcoinPayouts({ outputs: [output(100_000n, 0), output(150_000n, 1)], payments, feeRateSatPerVbyte: 10n, changeAddress: 'change' });
    const fee = p2wpkhVirtualSize(2, 4) * 10n;
    expect(plan.fee).toBe(fee);
    expect(plan.outputs).toEqual([
      { address: 'r1', amount: 50_000n },
      { address: 'r2', amount: 60_000n },
      { address: 'r3', amount: 70_000n },
      { address: 'change', amount: 250_000n - 180_000n - fee },
    ]);
  });
});

describe('payout batch decider', () => {
  const transaction = { raw: '00', txHash: 'a'.repeat(64), fee: '300', shares: ['100', '100', '100'], headBlockNumber: 10, inputs: [{ txHash: 'b'.repeat(64), index: 0, address: 'addr', amount: '500000' }] };
  const withdrawals = ['w1', 'w2', 'w3'].map((id, outputIndex) => ({ id, outputIndex, recipient: `r${outputIndex}`, amount: '50000' }));
  const record: Extract<PayoutBatchCommand, { type: 'RecordPayoutBatch' }> = { type: 'RecordPayoutBatch', batchId: 'batch-1', orgId: 'org', chainId: 'bip122:x', tokenId: 'btc', withdrawals, transaction };
  const signed = evolvePayoutBatch(payoutBatchDecider.initialState, decidePayoutBatch(record, payoutBatchDecider.initialState, { now })[0]!);

  it('records a batch once; the same record again decides nothing', () => {
    expect(signed).toMatchObject({ status: 'Signed', batchId: 'batch-1', current: { txHash: transaction.txHash, shares: ['100', '100', '100'] } });
    expect(decidePayoutBatch(record, signed, { now })).toEqual([]);
  });

  it('refuses shares that do not add up to the fee, or name a withdrawal twice', () => {
    expect(() => decidePayoutBatch({ ...record, transaction: { ...transaction, shares: ['100', '100', '99'] } }, payoutBatchDecider.initialState, { now })).toThrow(RangeError);
    expect(() => decidePayoutBatch({ ...record, withdrawals: [withdrawals[0]!, withdrawals[0]!, withdrawals[1]!] }, payoutBatchDecider.initialState, { now })).toThrow(RangeError);
  });

  it('gives every withdrawal its share as its fee, held, and the batch it is paid in', () => {
    expect(signedWithdrawalCommands(record)[2]).toMatchObject({ type: 'RecordSignedTransaction', id: 'w3', fee: '100', holdFee: true, batch: { id: 'batch-1', fee: '300', size: 3, outputIndex: 2 } });
  });

  it('a replacement takes the place of the transaction followed only, and raises every share', () => {
    const replacement = { ...transaction, txHash: 'c'.repeat(64), fee: '450', shares: ['150', '150', '150'] };
    const replace = { type: 'RecordPayoutBatchReplacement' as const, batchId: 'batch-1', replacedTxHash: transaction.txHash, transaction: replacement };
    const [event] = decidePayoutBatch(replace, signed, { now });
    expect(event).toMatchObject({ type: 'PayoutBatchReplaced', data: { txHash: replacement.txHash, replacedTxHash: transaction.txHash, replacedFee: '300' } });
    const replaced = evolvePayoutBatch(signed, event!);
    expect(decidePayoutBatch(replace, replaced, { now })).toEqual([]);
    expect(() => decidePayoutBatch({ ...replace, transaction: { ...replacement, txHash: 'd'.repeat(64) } }, replaced, { now })).toThrow(/follows/);
    expect(() => decidePayoutBatch({ ...replace, transaction: { ...replacement, shares: ['250', '100', '100'] } }, signed, { now })).toThrow(/raises every withdrawal/);
  });
});
