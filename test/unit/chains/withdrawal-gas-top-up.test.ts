import { describe, expect, it } from 'vitest';
import { gasTopUpDecider, MAX_TOP_UPS_PER_WITHDRAWAL, type GasTopUpState } from '../../../src/domain/gas-top-up/gas-top-up.js';

const now = new Date('2026-11-22T10:00:00.000Z');
const step = (txHash: string) => ({ txHash, raw: `raw-${txHash}`, nonce: 0, from: '0xgas', to: '0xsettlement', amount: '130000000000000', estimatedFee: '42000000000000' });
const signedWith = (state: GasTopUpState, txHash: string) =>
  gasTopUpDecider.decide({ type: 'RecordTopUpSigned', withdrawalId: 'w1', chainId: 'eip155:1', step: step(txHash) }, state, { now }).reduce(gasTopUpDecider.evolve, state);

describe('the gas top-ups of a withdrawal', () => {
  it('records a top-up once: the same bytes again decide nothing, other bytes are refused while one is in flight', () => {
    const signed = signedWith(gasTopUpDecider.initialState, '0xa');
    expect(signed).toMatchObject({ status: 'Signed', count: 1 });
    expect(gasTopUpDecider.decide({ type: 'RecordTopUpSigned', withdrawalId: 'w1', chainId: 'eip155:1', step: step('0xa') }, signed, { now })).toEqual([]);
    expect(() => signedWith(signed, '0xb')).toThrow(/Signed/);
  });

  it('confirms or fails only a signed top-up, each once', () => {
    expect(() => gasTopUpDecider.decide({ type: 'RecordTopUpConfirmed', withdrawalId: 'w1', blockNumber: 5, fee: 1n }, gasTopUpDecider.initialState, { now })).toThrow();
    const signed = signedWith(gasTopUpDecider.initialState, '0xa');
    const [confirmed] = gasTopUpDecider.decide({ type: 'RecordTopUpConfirmed', withdrawalId: 'w1', blockNumber: 5, fee: 42n }, signed, { now });
    expect(confirmed).toMatchObject({ type: 'WithdrawalGasTopUpConfirmed', data: { txHash: '0xa', blockNumber: 5, fee: '42' } });
    const after = gasTopUpDecider.evolve(signed, confirmed!);
    expect(gasTopUpDecider.decide({ type: 'RecordTopUpConfirmed', withdrawalId: 'w1', blockNumber: 5, fee: 42n }, after, { now })).toEqual([]);
    expect(() => gasTopUpDecider.decide({ type: 'RecordTopUpFailed', withdrawalId: 'w1', error: 'x' }, after, { now })).toThrow();
  });

  it(`allows at most ${MAX_TOP_UPS_PER_WITHDRAWAL} top-ups per withdrawal`, () => {
    let state: GasTopUpState = gasTopUpDecider.initialState;
    for (let n = 0; n < MAX_TOP_UPS_PER_WITHDRAWAL; n++) {
      state = signedWith(state, `0x${n}`);
      state = gasTopUpDecider.decide({ type: 'RecordTopUpConfirmed', withdrawalId: 'w1', blockNumber: n, fee: 1n }, state, { now }).reduce(gasTopUpDecider.evolve, state);
    }
    expect(() => signedWith(state, '0xff')).toThrow(expect.objectContaining({ code: 'GAS_TOP_UP_LIMIT' }));
  });
});
