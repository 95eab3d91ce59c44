import type { Decider, DomainEvent } from '../decider.js';
import { DomainError } from '../../errors.js';
import type { SignedStep } from '../sweep/sweep.js';

/**
 * The gas top-ups of one withdrawal (stream `withdrawalGas-<id>`): an EVM/Tron settlement wallet
 * lacking the fee gets it from the organization's gas wallet, and like every transaction of the
 * service the top-up is recorded signed before it is sent, so a restart follows the same bytes and
 * never tops up twice for one need. The withdrawal's own events stay the withdrawal decider's.
 */
export type GasTopUpEvent =
  /** `replacing`: the withdrawal's transaction whose EIP-1559 replacement this top-up pays the higher fee of (absent: the first one's fee) */
  | DomainEvent<'WithdrawalGasTopUpSigned', { withdrawalId: string; chainId: string; step: SignedStep; replacing?: string; signedAt: string }>
  | DomainEvent<'WithdrawalGasTopUpConfirmed', { withdrawalId: string; txHash: string; blockNumber: number; fee: string; confirmedAt: string }>
  | DomainEvent<'WithdrawalGasTopUpFailed', { withdrawalId: string; txHash: string; error: string; failedAt: string }>;

export type GasTopUpState =
  | { status: 'None'; count: number }
  | { status: 'Signed' | 'Confirmed'; step: SignedStep; count: number; replacing?: string }
  | { status: 'Failed'; step: SignedStep; error: string; count: number; replacing?: string };

export type GasTopUpCommand =
  | { type: 'RecordTopUpSigned'; withdrawalId: string; chainId: string; step: SignedStep; replacing?: string }
  | { type: 'RecordTopUpConfirmed'; withdrawalId: string; blockNumber: number; fee: bigint }
  | { type: 'RecordTopUpFailed'; withdrawalId: string; error: string };

/** a withdrawal's fee does not change much: more top-ups than this means something keeps draining the wallet */
export const MAX_TOP_UPS_PER_WITHDRAWAL = 3;

const evolve = (state: GasTopUpState, event: GasTopUpEvent): GasTopUpState => {
  switch (event.type) {
    case 'WithdrawalGasTopUpSigned':
      return { status: 'Signed', step: event.data.step, count: state.count + 1, ...(event.data.replacing ? { replacing: event.data.replacing } : {}) };
    case 'WithdrawalGasTopUpConfirmed':
      return state.status === 'None' ? state : { ...state, status: 'Confirmed' };
    case 'WithdrawalGasTopUpFailed':
      return state.status === 'None' ? state : { ...state, status: 'Failed', error: event.data.error };
  }
};

const outOfOrder = (command: GasTopUpCommand, state: GasTopUpState) =>
  new DomainError('WITHDRAWAL_ALREADY_PROCESSED', `${command.type} does not apply to a gas top-up that is ${state.status}`, { status: state.status });

/** One top-up in flight at a time; a report repeated after a crash decides nothing. */
const decide = (command: GasTopUpCommand, state: GasTopUpState, { now }: { now: Date }): GasTopUpEvent[] => {
  const at = now.toISOString();
  switch (command.type) {
    case 'RecordTopUpSigned':
      if (state.status === 'Signed') {
        if (state.step.txHash === command.step.txHash) return [];
        throw outOfOrder(command, state);
      }
      if (state.count >= MAX_TOP_UPS_PER_WITHDRAWAL) throw new DomainError('GAS_TOP_UP_LIMIT', `withdrawal ${command.withdrawalId} had ${state.count} gas top-ups already`);
      return [
        {
          type: 'WithdrawalGasTopUpSigned',
          data: { withdrawalId: command.withdrawalId, chainId: command.chainId, step: command.step, ...(command.replacing ? { replacing: command.replacing } : {}), signedAt: at },
        },
      ];
    case 'RecordTopUpConfirmed':
      if (state.status === 'Confirmed') return [];
      if (state.status !== 'Signed') throw outOfOrder(command, state);
      return [{ type: 'WithdrawalGasTopUpConfirmed', data: { withdrawalId: command.withdrawalId, txHash: state.step.txHash, blockNumber: command.blockNumber, fee: command.fee.toString(), confirmedAt: at } }];
    case 'RecordTopUpFailed':
      if (state.status === 'Failed') return [];
      if (state.status !== 'Signed') throw outOfOrder(command, state);
      return [{ type: 'WithdrawalGasTopUpFailed', data: { withdrawalId: command.withdrawalId, txHash: state.step.txHash, error: command.error, failedAt: at } }];
  }
};

export const gasTopUpDecider: Decider<GasTopUpCommand, GasTopUpEvent, GasTopUpState> = {
  initialState: { status: 'None', count: 0 },
  evolve,
  decide,
};
