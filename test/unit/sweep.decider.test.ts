import { describe, expect, it } from 'vitest';
import { sweepDecider, type SweepCommand } from '../../src/domain/sweep/decide.js';
import { evolveSweep, initialSweep, type SignedStep, type SweepEvent, type SweepPlan } from '../../src/domain/sweep/sweep.js';
import { NOW, specFor } from '../support/given-when-then.js';

const given = specFor(sweepDecider);
const at = NOW.toISOString();
const ref = { chainId: 'eip155:1', txHash: '0xdeposit', index: 3 };

const tokenPlan: SweepPlan = {
  ...ref,
  orgId: 'o1',
  tokenId: 'eip155:1/erc20:0xdac17f958d2ee523a2206206994597c13d831ec7',
  kind: 'token',
  asset: '0xdAC17F958D2ee523a2206206994597C13D831ec7',
  amount: '25000000',
  depositAddress: '0xD0',
  depositIndex: 4,
  settlementAddress: '0x5E',
  walletIndex: 0,
  gasWalletAddress: '0x6A',
};
const nativePlan: SweepPlan = { ...tokenPlan, tokenId: 'eip155:1/slip44:60', kind: 'native', asset: 'native', amount: '1000000000000000000', gasWalletAddress: null };

const step = (txHash: string, amount: string, nonce = 0): SignedStep => ({ txHash, raw: `0xraw${txHash}`, nonce, from: '0x6A', to: '0xD0', amount, estimatedFee: '42000000000000' });

const scheduled = (plan: SweepPlan): SweepEvent => ({ type: 'SweepScheduled', data: { ...plan, scheduledAt: at } });
const waiting: SweepEvent = { type: 'SweepWaitingForGas', data: { ...ref, required: '172000000000000', available: '0', since: at } };
const topUpSigned: SweepEvent = { type: 'GasTopUpSigned', data: { ...ref, step: step('0xtop', '130000000000000'), signedAt: at } };
const topUpBroadcast: SweepEvent = { type: 'GasTopUpBroadcast', data: { ...ref, transactionHash: '0xtop', broadcastAt: at } };
const topUpConfirmed: SweepEvent = { type: 'GasTopUpConfirmed', data: { ...ref, transactionHash: '0xtop', blockNumber: 20, fee: '42000000000000', confirmedAt: at } };
const sweepSigned = (amount = '25000000'): SweepEvent => ({ type: 'SweepSigned', data: { ...ref, step: step('0xsweep', amount), signedAt: at } });
const sweepBroadcast: SweepEvent = { type: 'SweepBroadcast', data: { ...ref, transactionHash: '0xsweep', broadcastAt: at } };

const schedule = (plan: SweepPlan): SweepCommand => ({ type: 'ScheduleSweep', plan });

describe('sweep decider', () => {
  it('schedules a sweep once', () => {
    given([]).when(schedule(tokenPlan)).then([scheduled(tokenPlan)]);
    given([scheduled(tokenPlan)]).when(schedule(tokenPlan)).then([]);
  });

  it('refuses a token plan without a gas wallet and a native plan with one', () => {
    given([]).when(schedule({ ...tokenPlan, gasWalletAddress: null })).thenThrows('BAD_REQUEST');
    given([]).when(schedule({ ...nativePlan, gasWalletAddress: '0x6A' })).thenThrows('BAD_REQUEST');
  });

  it('says it waits for gas once per state change', () => {
    given([scheduled(tokenPlan)]).when({ type: 'WaitForGas', required: 172_000_000_000_000n, available: 0n }).then([waiting]);
    given([scheduled(tokenPlan), waiting]).when({ type: 'WaitForGas', required: 172_000_000_000_000n, available: 5n }).then([]);
  });

  it('a native sweep never waits for gas: it pays its own fee', () => {
    given([scheduled(nativePlan)]).when({ type: 'WaitForGas', required: 1n, available: 0n }).thenThrows('SWEEP_STEP_OUT_OF_ORDER');
    given([scheduled(nativePlan)]).when({ type: 'RecordTopUpSigned', step: step('0xtop', '1') }).thenThrows('SWEEP_STEP_OUT_OF_ORDER');
  });

  it('records the top-up signed when gas arrives, before anything is broadcast', () => {
    given([scheduled(tokenPlan), waiting]).when({ type: 'RecordTopUpSigned', step: step('0xtop', '130000000000000') }).then([topUpSigned]);
  });

  it('never records a second signature for a step', () => {
    given([scheduled(tokenPlan), topUpSigned]).when({ type: 'RecordTopUpSigned', step: step('0xother', '130000000000000', 1) }).thenThrows('SWEEP_STEP_OUT_OF_ORDER');
    given([scheduled(tokenPlan), topUpSigned, topUpBroadcast, topUpConfirmed, sweepSigned()])
      .when({ type: 'RecordSweepSigned', step: step('0xother', '25000000', 1) })
      .thenThrows('SWEEP_STEP_OUT_OF_ORDER');
  });

  it('a token sweep is signed after its top-up is confirmed, not before', () => {
    given([scheduled(tokenPlan), topUpSigned, topUpBroadcast]).when({ type: 'RecordSweepSigned', step: step('0xsweep', '25000000') }).thenThrows('SWEEP_STEP_OUT_OF_ORDER');
    given([scheduled(tokenPlan), topUpSigned, topUpBroadcast, topUpConfirmed]).when({ type: 'RecordSweepSigned', step: step('0xsweep', '25000000') }).then([sweepSigned()]);
  });

  it('a token sweep whose deposit address already has the gas is signed without a top-up', () => {
    given([scheduled(tokenPlan)]).when({ type: 'RecordSweepSigned', step: step('0xsweep', '25000000') }).then([sweepSigned()]);
  });

  it('reports of a broadcast or a confirmation are idempotent (a resumed sweeper reports again)', () => {
    given([scheduled(tokenPlan), topUpSigned]).when({ type: 'RecordTopUpBroadcast' }).then([topUpBroadcast]);
    given([scheduled(tokenPlan), topUpSigned, topUpBroadcast]).when({ type: 'RecordTopUpBroadcast' }).then([]);
    given([scheduled(tokenPlan), topUpSigned]).when({ type: 'RecordTopUpConfirmed', blockNumber: 20, fee: 42_000_000_000_000n }).then([topUpConfirmed]);
    given([scheduled(tokenPlan), topUpSigned, topUpConfirmed]).when({ type: 'RecordTopUpConfirmed', blockNumber: 20, fee: 1n }).then([]);
  });

  it('confirms a native sweep with the fee mined and what the ledger was charged', () => {
    const events = [scheduled(nativePlan), sweepSigned('999958000000000000'), sweepBroadcast];
    const confirmed: SweepEvent = {
      type: 'SweepConfirmed',
      data: { ...ref, transactionHash: '0xsweep', blockNumber: 31, fee: '42000000000000', feeCharged: '42000000000000', confirmedAt: at },
    };
    given(events).when({ type: 'RecordSweepConfirmed', blockNumber: 31, fee: 42_000_000_000_000n, feeCharged: 42_000_000_000_000n }).then([confirmed]);
    given([...events, confirmed]).when({ type: 'RecordSweepConfirmed', blockNumber: 31, fee: 42_000_000_000_000n, feeCharged: 42_000_000_000_000n }).then([]);
    const state = [...events, confirmed].reduce(evolveSweep, initialSweep);
    expect(state).toMatchObject({ status: 'Confirmed', fee: '42000000000000', sweep: { txHash: '0xsweep', amount: '999958000000000000' } });
  });

  it('skips a native deposit that does not cover the fee', () => {
    given([scheduled(nativePlan)])
      .when({ type: 'SkipSweep', reason: 'too small', fee: 42_000_000_000_000n })
      .then([{ type: 'SweepSkipped', data: { ...ref, reason: 'too small', fee: '42000000000000', skippedAt: at } }]);
    given([scheduled(tokenPlan)]).when({ type: 'SkipSweep', reason: 'too small', fee: 1n }).thenThrows('SWEEP_STEP_OUT_OF_ORDER');
  });

  it('a failure names the step and the transaction it failed in; a finished sweep does not fail', () => {
    given([scheduled(tokenPlan), topUpSigned, topUpBroadcast])
      .when({ type: 'FailSweep', error: 'execution reverted' })
      .then([{ type: 'SweepFailed', data: { ...ref, step: 'topUp', transactionHash: '0xtop', error: 'execution reverted', failedAt: at } }]);
    given([scheduled(tokenPlan)])
      .when({ type: 'FailSweep', error: 'no account' })
      .then([{ type: 'SweepFailed', data: { ...ref, step: 'plan', transactionHash: null, error: 'no account', failedAt: at } }]);
    const failed: SweepEvent = { type: 'SweepFailed', data: { ...ref, step: 'plan', transactionHash: null, error: 'x', failedAt: at } };
    given([scheduled(tokenPlan), failed]).when({ type: 'FailSweep', error: 'again' }).then([]);
    given([]).when({ type: 'FailSweep', error: 'x' }).thenThrows('SWEEP_STEP_OUT_OF_ORDER');
  });

  it('every event keeps the deposit’s own hash, whatever the step’s hash', () => {
    const state = [scheduled(tokenPlan), topUpSigned, topUpBroadcast, topUpConfirmed, sweepSigned(), sweepBroadcast].reduce(evolveSweep, initialSweep);
    expect(state).toMatchObject({ status: 'SweepBroadcast', plan: { txHash: '0xdeposit' }, topUp: { txHash: '0xtop' }, topUpFee: '42000000000000', sweep: { txHash: '0xsweep' } });
  });

  it('the plan a scheduled sweep holds is the event’s data without its time, every field in its order', () => {
    for (const plan of [tokenPlan, nativePlan]) {
      const data = { ...plan, scheduledAt: at };
      const state = evolveSweep(initialSweep, { type: 'SweepScheduled', data });
      const { scheduledAt: _at, ...expected } = data;
      expect(state.status === 'None' ? null : JSON.stringify(state.plan)).toBe(JSON.stringify(expected));
    }
  });
});
