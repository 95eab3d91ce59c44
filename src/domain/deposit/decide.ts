import type { DecideContext, Decider } from '../decider.js';
import { DomainError } from '../../errors.js';
import { evolveDeposit, initialDeposit, type Deposit, type DepositDetails, type DepositEvent } from './deposit.js';

export type DepositCommand =
  | ({ type: 'DetectDeposit' } & DepositDetails)
  | { type: 'ConfirmDeposit'; confirmations: number }
  | { type: 'RevertDeposit'; reason: string };

const notFound = () => new DomainError('NOT_FOUND', 'No such deposit');

const detect = (command: Extract<DepositCommand, { type: 'DetectDeposit' }>, state: Deposit, at: string): DepositEvent[] => {
  if (state.status !== 'None' && state.status !== 'Reverted') {
    throw new DomainError('DUPLICATE_DEPOSIT', `deposit ${command.txHash}#${command.index} on ${command.chainId} is already recorded`, {
      chainId: command.chainId,
      txnHash: command.txHash,
      index: command.index,
    });
  }
  if (!/^[1-9]\d*$/.test(command.amount)) throw new DomainError('INVALID_AMOUNT', 'a deposit amount is a positive integer of base units');
  const { type: _type, ...details } = command;
  return [{ type: 'DepositDetected', data: { ...details, detectedAt: at } }];
};

const confirm = (confirmations: number, state: Deposit, at: string): DepositEvent[] => {
  if (!Number.isInteger(confirmations) || confirmations < 1) throw new DomainError('BAD_REQUEST', 'confirmations is a positive integer');
  if (state.status === 'None') throw notFound();
  if (state.status === 'Confirmed') return [];
  if (state.status === 'Reverted') {
    throw new DomainError('DEPOSIT_REVERTED', `deposit ${state.txHash}#${state.index} was reverted (${state.reason}); it cannot be confirmed`);
  }
  const { chainId, txHash, index } = state;
  return [{ type: 'DepositConfirmed', data: { chainId, txHash, index, confirmations, confirmedAt: at, credited: state.credit === 'credit' } }];
};

const revert = (reason: string, state: Deposit, at: string): DepositEvent[] => {
  if (state.status === 'None') throw notFound();
  if (state.status === 'Reverted') return [];
  if (state.status === 'Confirmed') {
    throw new DomainError('DEPOSIT_ALREADY_CONFIRMED', `deposit ${state.txHash}#${state.index} is confirmed; it is not reverted`);
  }
  const { chainId, txHash, index } = state;
  return [{ type: 'DepositReverted', data: { chainId, txHash, index, reason, revertedAt: at } }];
};

/**
 * The deposit's life: detected → confirmed, or detected → reverted (a reorg before confirmation).
 *
 * - Detecting a deposit that exists is DUPLICATE_DEPOSIT (409): a transfer is recorded, and so
 *   credited, once. After a revert it may be detected again: a reorg often puts the same transaction
 *   into a later block, and it must then count.
 * - Confirming a confirmed deposit, or reverting a reverted one, decides nothing: watchers report
 *   again after a restart, and the second report must be harmless.
 * - Confirming a reverted deposit (DEPOSIT_REVERTED) or reverting a confirmed one
 *   (DEPOSIT_ALREADY_CONFIRMED) is refused: the first would credit money that left the chain, the
 *   second would take back money already available (a reorg deeper than the confirmation depth
 *   needs an operator, not a silent debit).
 */
export const decideDeposit = (command: DepositCommand, state: Deposit, { now }: DecideContext): DepositEvent[] => {
  const at = now.toISOString();
  switch (command.type) {
    case 'DetectDeposit':
      return detect(command, state, at);
    case 'ConfirmDeposit':
      return confirm(command.confirmations, state, at);
    case 'RevertDeposit':
      return revert(command.reason, state, at);
    default: {
      const _never: never = command;
      return [];
    }
  }
};

export const depositDecider: Decider<DepositCommand, DepositEvent, Deposit> = {
  initialState: initialDeposit,
  evolve: evolveDeposit,
  decide: decideDeposit,
};
