import { describe, expect, it } from 'vitest';
import { InsufficientFundsError, p2wpkhVirtualSize, planBitcoinSpend, xrpDestination } from '../../../src/chains/bitcoin/spend-planning.js';

const output = (amount: bigint, txHash = 'a'.repeat(64), index = 0) => ({ txHash, index, amount, wallet: `w${index}` });
const recipient = 'tb1qrecipient';
const changeAddress = 'tb1qchange';

describe('planBitcoinSpend', () => {
  it('takes the largest output first and returns the change to the organization', () => {
    const plan = planBitcoinSpend({ outputs: [output(20_000n, 'b'.repeat(64), 1), output(100_000n, 'c'.repeat(64), 2)], recipient, amount: 50_000n, feeRateSatPerVbyte: 10n, changeAddress });
    expect(plan.inputs.map((input) => input.amount)).toEqual([100_000n]);
    const fee = p2wpkhVirtualSize(1, 2) * 10n;
    expect(plan.fee).toBe(fee);
    expect(plan.outputs).toEqual([{ address: recipient, amount: 50_000n }, { address: changeAddress, amount: 100_000n - 50_000n - fee }]);
  });

  it('adds inputs until amount and fee are covered; the fee grows with each input', () => {
    const plan = planBitcoinSpend({ outputs: [output(30_000n, 'b'.repeat(64), 1), output(30_000n, 'c'.repeat(64), 2), output(30_000n, 'd'.repeat(64), 3)], recipient, amount: 50_000n, feeRateSatPerVbyte: 10n, changeAddress });
    expect(plan.inputs).toHaveLength(2);
    expect(plan.fee).toBe(p2wpkhVirtualSize(2, 2) * 10n);
    const inTotal = plan.inputs.reduce((total, input) => total + input.amount, 0n);
    const outTotal = plan.outputs.reduce((total, out) => total + out.amount, 0n);
    expect(inTotal - outTotal).toBe(plan.fee);
  });

  it('lets the fee take change that would be dust', () => {
    const feeWithoutChange = p2wpkhVirtualSize(1, 1) * 10n;
    const plan = planBitcoinSpend({ outputs: [output(50_000n + feeWithoutChange + 500n)], recipient, amount: 50_000n, feeRateSatPerVbyte: 10n, changeAddress });
    expect(plan.outputs).toEqual([{ address: recipient, amount: 50_000n }]);
    expect(plan.fee).toBe(feeWithoutChange + 500n);
  });

  it('refuses when the outputs cannot pay amount and fee', () => {
    expect(() => planBitcoinSpend({ outputs: [output(50_000n)], recipient, amount: 50_000n, feeRateSatPerVbyte: 10n, changeAddress })).toThrow(InsufficientFundsError);
    expect(() => planBitcoinSpend({ outputs: [], recipient, amount: 50_000n, feeRateSatPerVbyte: 10n, changeAddress })).toThrow(InsufficientFundsError);
  });

  it('refuses a dust amount', () => {
    expect(() => planBitcoinSpend({ outputs: [output(100_000n)], recipient, amount: 545n, feeRateSatPerVbyte: 10n, changeAddress })).toThrow(RangeError);
  });

  it('is deterministic over the order the node lists outputs in', () => {
    const a = output(40_000n, 'b'.repeat(64), 1);
    const b = output(40_000n, 'c'.repeat(64), 2);
    const first = planBitcoinSpend({ outputs: [a, b], recipient, amount: 30_000n, feeRateSatPerVbyte: 10n, changeAddress });
    const second = planBitcoinSpend({ outputs: [b, a], recipient, amount: 30_000n, feeRateSatPerVbyte: 10n, changeAddress });
    expect(second).toEqual(first);
  });
});

describe('xrpDestination', () => {
  const classic = 'rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe';
  it('takes the tag from the memo', () => {
    expect(xrpDestination(classic, '42', 'mainnet')).toEqual({ classicAddress: classic, tag: 42 });
    expect(xrpDestination(classic, null, 'mainnet')).toEqual({ classicAddress: classic, tag: undefined });
  });
  it('takes the tag from an X-address, and refuses a memo that contradicts it', () => {
    const xAddress = 'XVLhHMPHU98es4dbozjVtdWzVrDjtV18pX8yuPT7y4xaEHi';
    const parsed = xrpDestination(xAddress, null, 'mainnet');
    expect(parsed.classicAddress).toMatch(/^r/);
    expect(typeof parsed.tag).toBe('number');
    expect(xrpDestination(xAddress, String(parsed.tag), 'mainnet')).toEqual(parsed);
    expect(() => xrpDestination(xAddress, String(parsed.tag! + 1), 'mainnet')).toThrow(/destination tag/);
  });
  it('refuses a memo that is not a tag', () => {
    expect(() => xrpDestination(classic, 'invoice 7', 'mainnet')).toThrow(RangeError);
    expect(() => xrpDestination(classic, '4294967296', 'mainnet')).toThrow(RangeError);
  });
});
