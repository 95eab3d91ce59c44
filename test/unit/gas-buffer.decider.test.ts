import { describe, expect, it } from 'vitest';
import { gasBufferDecider, type GasBufferAccount, type GasBufferCommand } from '../../src/domain/gas-buffer/gas-buffer.js';

const now = new Date('2026-11-26T10:00:00.000Z');
const of = { orgId: 'org-1', chainId: 'eip155:1' };
const step = (txHash: string, amount: bigint) => ({ txHash, raw: `raw-${txHash}`, nonce: 0, from: '0xgas', to: '0xsettlement', amount: amount.toString(), estimatedFee: '42000000000000' });
const apply = (state: GasBufferAccount, command: GasBufferCommand) => gasBufferDecider.decide(command, state, { now }).reduce(gasBufferDecider.evolve, state);
const funded = (amount: bigint) => {
  const signed = apply(gasBufferDecider.initialState, { ...of, type: 'RecordBufferTopUpSigned', step: step('0xa', amount) });
  return apply(signed, { ...of, type: 'RecordBufferTopUpConfirmed', blockNumber: 7, fee: 21n });
};

describe('the gas buffer of a settlement wallet', () => {
  it('counts a top-up only once it is confirmed; one in flight at a time; the same bytes again decide nothing', () => {
    const signed = apply(gasBufferDecider.initialState, { ...of, type: 'RecordBufferTopUpSigned', step: step('0xa', 1000n) });
    expect(signed).toEqual({ balance: 0n, topUp: step('0xa', 1000n) });
    expect(gasBufferDecider.decide({ ...of, type: 'RecordBufferTopUpSigned', step: step('0xa', 1000n) }, signed, { now })).toEqual([]);
    expect(() => apply(signed, { ...of, type: 'RecordBufferTopUpSigned', step: step('0xb', 1000n) })).toThrow(expect.objectContaining({ code: 'GAS_BUFFER_TOP_UP_IN_FLIGHT' }));
    const [confirmed] = gasBufferDecider.decide({ ...of, type: 'RecordBufferTopUpConfirmed', blockNumber: 7, fee: 21n }, signed, { now });
    expect(confirmed).toMatchObject({ type: 'GasBufferTopUpConfirmed', data: { txHash: '0xa', amount: '1000', fee: '21', account: { balance: '1000', topUp: null } } });
    const after = gasBufferDecider.evolve(signed, confirmed!);
    expect(after).toEqual({ balance: 1000n, topUp: null });
    expect(gasBufferDecider.decide({ ...of, type: 'RecordBufferTopUpConfirmed', blockNumber: 7, fee: 21n }, after, { now })).toEqual([]);
  });

  it('a failed top-up adds nothing and frees the way for the next', () => {
    const signed = apply(funded(500n), { ...of, type: 'RecordBufferTopUpSigned', step: step('0xb', 1000n) });
    const failed = apply(signed, { ...of, type: 'RecordBufferTopUpFailed', error: 'its nonce was taken' });
    expect(failed).toEqual({ balance: 500n, topUp: null });
    expect(apply(failed, { ...of, type: 'RecordBufferTopUpSigned', step: step('0xc', 1000n) }).topUp?.txHash).toBe('0xc');
  });

  it('draws a fee only from what it holds; a draw it cannot pay is refused and changes nothing', () => {
    const state = funded(1000n);
    const drawn = apply(state, { ...of, type: 'DrawGas', withdrawalId: 'w1', fee: 600n });
    expect(drawn).toEqual({ balance: 400n, topUp: null });
    expect(() => gasBufferDecider.decide({ ...of, type: 'DrawGas', withdrawalId: 'w2', fee: 401n }, drawn, { now })).toThrow(expect.objectContaining({ code: 'GAS_BUFFER_SHORT' }));
    expect(() => gasBufferDecider.decide({ ...of, type: 'DrawGas', withdrawalId: 'w2', fee: 0n }, drawn, { now })).toThrow(expect.objectContaining({ code: 'BAD_REQUEST' }));
    expect(apply(drawn, { ...of, type: 'DrawGas', withdrawalId: 'w2', fee: 400n })).toEqual({ balance: 0n, topUp: null });
  });

  it('every event carries the account after it: the last event alone is the state', () => {
    let state = funded(1000n);
    const events = [
      ...gasBufferDecider.decide({ ...of, type: 'DrawGas', withdrawalId: 'w1', fee: 300n }, state, { now }),
    ];
    state = events.reduce(gasBufferDecider.evolve, state);
    const more = gasBufferDecider.decide({ ...of, type: 'RecordBufferTopUpSigned', step: step('0xd', 900n) }, state, { now });
    state = more.reduce(gasBufferDecider.evolve, state);
    expect(gasBufferDecider.evolve(gasBufferDecider.initialState, more[0]!)).toEqual(state);
    expect(state).toEqual({ balance: 700n, topUp: step('0xd', 900n) });
  });
});
