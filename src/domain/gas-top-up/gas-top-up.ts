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
  | DomainEvent<'WithdrawalGasTopUpFailed', { withdrawalId: string; txHash: string; error: string; failedAt: string }>
  /** the fee drawn from the organization's gas buffer (`gasBuffer-<chainId>-<orgId>`, appended in the same append) instead of a top-up of its own */
  | DomainEvent<'WithdrawalGasDrawnFromBuffer', { withdrawalId: string; chainId: string; fee: string; drawnAt: string }>;

/** `drawn`: what the withdrawal drew from its organization's gas buffer, all draws together */
export type GasTopUpState = (
  | { status: 'None'; count: number }
  | { status: 'Signed' | 'Confirmed'; step: SignedStep; count: number; replacing?: string }
  | { status: 'Failed'; step: SignedStep; error: string; count: number; replacing?: string }
) & { drawn: bigint };

export type GasTopUpCommand =
  | { type: 'RecordTopUpSigned'; withdrawalId: string; chainId: string; step: SignedStep; replacing?: string }
  | { type: 'RecordTopUpConfirmed'; withdrawalId: string; blockNumber: number; fee: bigint }
  | { type: 'RecordTopUpFailed'; withdrawalId: string; error: string }
  | { type: 'RecordGasDrawn'; withdrawalId: string; chainId: string; fee: bigint };

/** a withdrawal's fee does not change much: more top-ups than this means something keeps draining the wallet */
export const MAX_TOP_UPS_PER_WITHDRAWAL = 3;

const evolve = (state: GasTopUpState, event: GasTopUpEvent): GasTopUpState => {
  switch (event.type) {
    case 'WithdrawalGasTopUpSigned':
      return { status: 'Signed', step: event.data.step, count: state.count + 1, drawn: state.drawn, ...(event.data.replacing ? { replacing: event.data.replacing } : {}) };
    case 'WithdrawalGasTopUpConfirmed':
      return state.status === 'None' ? state : { ...state, status: 'Confirmed' };
    case 'WithdrawalGasTopUpFailed':
      return state.status === 'None' ? state : { ...state, status: 'Failed', error: event.data.error };
    case 'WithdrawalGasDrawnFromBuffer':
      return { ...state, drawn: state.drawn + BigInt(event.data.fee) };
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
    case 'RecordGasDrawn':
      if (command.fee <= 0n) throw new DomainError('BAD_REQUEST', 'a draw from the gas buffer takes a positive fee');
      return [{ type: 'WithdrawalGasDrawnFromBuffer', data: { withdrawalId: command.withdrawalId, chainId: command.chainId, fee: command.fee.toString(), drawnAt: at } }];
  }
};

export const gasTopUpDecider: Decider<GasTopUpCommand, GasTopUpEvent, GasTopUpState> = {
  initialState: { status: 'None', count: 0, drawn: 0n },
  evolve,
  decide,
};
