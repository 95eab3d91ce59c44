import type { DecideContext, Decider } from '../decider.js';
import type { DepositRef } from '../deposit/deposit.js';
import { DomainError } from '../../errors.js';
import { evolveSweep, initialSweep, isTerminal, type SignedStep, type Sweep, type SweepEvent, type SweepPlan, type SweepStatus } from './sweep.js';

export type SweepCommand =
  | { type: 'ScheduleSweep'; plan: SweepPlan }
  | { type: 'SkipSweep'; reason: string; fee: bigint }
  | { type: 'WaitForGas'; required: bigint; available: bigint }
  | { type: 'RecordTopUpSigned'; step: SignedStep }
  | { type: 'RecordTopUpBroadcast' }
  | { type: 'RecordTopUpConfirmed'; blockNumber: number; fee: bigint }
  | { type: 'RecordSweepSigned'; step: SignedStep }
  | { type: 'RecordSweepBroadcast' }
  | { type: 'RecordSweepConfirmed'; blockNumber: number; fee: bigint; feeCharged: bigint }
  | { type: 'FailSweep'; error: string };

type Active = Exclude<Sweep, { status: 'None' }>;

const outOfOrder = (command: SweepCommand, state: Sweep) =>
  new DomainError('SWEEP_STEP_OUT_OF_ORDER', `${command.type} does not apply to a sweep that is ${state.status}`, { status: state.status });

const refOf = ({ plan: { chainId, txHash, index } }: Active): DepositRef => ({ chainId, txHash, index });

const requireStatus = (command: SweepCommand, state: Sweep, allowed: readonly SweepStatus[]): Active => {
  if (state.status === 'None' || !allowed.includes(state.status)) throw outOfOrder(command, state);
  return state;
};

const checkStep = (step: SignedStep) => {
  if (!/^[1-9]\d*$/.test(step.amount)) throw new DomainError('INVALID_AMOUNT', 'a signed step moves a positive amount of base units');
};

/** The statuses before anything of the sweep itself is signed, from which a token sweep may sign (the deposit address already had the gas). */
const BEFORE_SIGNING: readonly SweepStatus[] = ['Scheduled', 'WaitingForGas'];

/**
 * The sweep's state machine. Repeating the report of a step already recorded (broadcast,
 * confirmed, waiting) decides nothing, so a sweeper resuming after a crash may report again; a
 * second *signature* for a step is refused (SWEEP_STEP_OUT_OF_ORDER): a step is signed once, and
 * only those bytes are ever broadcast.
 */
export const decideSweep = (command: SweepCommand, state: Sweep, { now }: DecideContext): SweepEvent[] => {
  const at = now.toISOString();
  switch (command.type) {
    case 'ScheduleSweep':
      if (state.status !== 'None') return [];
      if (!/^[1-9]\d*$/.test(command.plan.amount)) throw new DomainError('INVALID_AMOUNT', 'a sweep moves a positive deposit');
      if ((command.plan.kind === 'token') !== (command.plan.gasWalletAddress !== null)) {
        throw new DomainError('BAD_REQUEST', 'a token sweep names its gas wallet, a native sweep none');
      }
      return [{ type: 'SweepScheduled', data: { ...command.plan, scheduledAt: at } }];
    case 'SkipSweep': {
      const sweep = requireStatus(command, state, ['Scheduled']);
      if (sweep.plan.kind !== 'native') throw outOfOrder(command, state);
      return [{ type: 'SweepSkipped', data: { ...refOf(sweep), reason: command.reason, fee: command.fee.toString(), skippedAt: at } }];
    }
    case 'WaitForGas': {
      if (state.status === 'WaitingForGas') return []; // said once per state change
      const sweep = requireStatus(command, state, ['Scheduled']);
      if (sweep.plan.kind !== 'token') throw outOfOrder(command, state);
      return [{ type: 'SweepWaitingForGas', data: { ...refOf(sweep), required: command.required.toString(), available: command.available.toString(), since: at } }];
    }
    case 'RecordTopUpSigned': {
      const sweep = requireStatus(command, state, BEFORE_SIGNING);
      if (sweep.plan.kind !== 'token') throw outOfOrder(command, state);
      checkStep(command.step);
      return [{ type: 'GasTopUpSigned', data: { ...refOf(sweep), step: command.step, signedAt: at } }];
    }
    case 'RecordTopUpBroadcast': {
      if (state.status === 'TopUpBroadcast') return [];
      const sweep = requireStatus(command, state, ['TopUpSigned']);
      return [{ type: 'GasTopUpBroadcast', data: { ...refOf(sweep), transactionHash: sweep.topUp!.txHash, broadcastAt: at } }];
    }
    case 'RecordTopUpConfirmed': {
      if (state.status === 'TopUpConfirmed') return [];
      const sweep = requireStatus(command, state, ['TopUpSigned', 'TopUpBroadcast']);
      const { blockNumber, fee } = command;
      return [{ type: 'GasTopUpConfirmed', data: { ...refOf(sweep), transactionHash: sweep.topUp!.txHash, blockNumber, fee: fee.toString(), confirmedAt: at } }];
    }
    case 'RecordSweepSigned': {
      const sweep = requireStatus(command, state, state.status !== 'None' && state.plan.kind === 'token' ? [...BEFORE_SIGNING, 'TopUpConfirmed'] : ['Scheduled']);
      checkStep(command.step);
      return [{ type: 'SweepSigned', data: { ...refOf(sweep), step: command.step, signedAt: at } }];
    }
    case 'RecordSweepBroadcast': {
      if (state.status === 'SweepBroadcast') return [];
      const sweep = requireStatus(command, state, ['SweepSigned']);
      return [{ type: 'SweepBroadcast', data: { ...refOf(sweep), transactionHash: sweep.sweep!.txHash, broadcastAt: at } }];
    }
    case 'RecordSweepConfirmed': {
      if (state.status === 'Confirmed') return [];
      const sweep = requireStatus(command, state, ['SweepSigned', 'SweepBroadcast']);
      const { blockNumber, fee, feeCharged } = command;
      return [
        {
          type: 'SweepConfirmed',
          data: { ...refOf(sweep), transactionHash: sweep.sweep!.txHash, blockNumber, fee: fee.toString(), feeCharged: feeCharged.toString(), confirmedAt: at },
        },
      ];
    }
    case 'FailSweep': {
      if (state.status === 'None') throw outOfOrder(command, state);
      if (isTerminal(state)) return [];
      const step = state.status === 'TopUpSigned' || state.status === 'TopUpBroadcast' ? 'topUp' : state.status === 'SweepSigned' || state.status === 'SweepBroadcast' ? 'sweep' : 'plan';
      const transactionHash = step === 'topUp' ? state.topUp!.txHash : step === 'sweep' ? state.sweep!.txHash : null;
      return [{ type: 'SweepFailed', data: { ...refOf(state), step, transactionHash, error: command.error, failedAt: at } }];
    }
    default: {
      const _never: never = command;
      return [];
    }
  }
};

export const sweepDecider: Decider<SweepCommand, SweepEvent, Sweep> = {
  initialState: initialSweep,
  evolve: evolveSweep,
  decide: decideSweep,
};
