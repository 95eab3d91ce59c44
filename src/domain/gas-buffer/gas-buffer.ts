import type { Decider, DomainEvent } from '../decider.js';
import { DomainError } from '../../errors.js';
import type { SignedStep } from '../sweep/sweep.js';

/**
 * The gas buffer of one organization's settlement wallet on one EVM or Tron chain (stream
 * `gasBuffer-<chainId>-<orgId>`): the gas wallet tops the settlement wallet up with one transfer
 * sized for many withdrawals, and each withdrawal draws its fee from that account before its
 * transaction is signed. The account is what was received (confirmed top-ups) less what was drawn
 * (each payment's most possible fee), so it never says more than the wallet holds for gas. Like
 * every transaction of the service, a top-up is recorded signed before it is sent. Every event
 * carries the account after it, so the last event alone is the state (start-up reads one event).
 */
export interface GasBufferAccount {
  /** native base units received and not yet drawn */
  balance: bigint;
  /** the top-up in flight (one at a time), or null */
  topUp: SignedStep | null;
}

/** The account as an event carries it (amounts as decimal strings). */
export interface GasBufferSnapshot {
  balance: string;
  topUp: SignedStep | null;
}

type Of<Data> = Data & { orgId: string; chainId: string; account: GasBufferSnapshot };

export type GasBufferEvent =
  | DomainEvent<'GasBufferTopUpSigned', Of<{ step: SignedStep; signedAt: string }>>
  | DomainEvent<'GasBufferTopUpConfirmed', Of<{ txHash: string; amount: string; blockNumber: number; fee: string; confirmedAt: string }>>
  | DomainEvent<'GasBufferTopUpFailed', Of<{ txHash: string; error: string; failedAt: string }>>
  /** `fee`: the most the withdrawal's transaction can cost (gas limit × max fee per gas; Tron: its estimate) */
  | DomainEvent<'GasBufferDrawn', Of<{ withdrawalId: string; fee: string; drawnAt: string }>>;

export type GasBufferCommand =
  | { type: 'RecordBufferTopUpSigned'; orgId: string; chainId: string; step: SignedStep }
  | { type: 'RecordBufferTopUpConfirmed'; orgId: string; chainId: string; blockNumber: number; fee: bigint }
  | { type: 'RecordBufferTopUpFailed'; orgId: string; chainId: string; error: string }
  | { type: 'DrawGas'; orgId: string; chainId: string; withdrawalId: string; fee: bigint };

export const EMPTY_GAS_BUFFER: GasBufferAccount = { balance: 0n, topUp: null };

const toSnapshot = (account: GasBufferAccount): GasBufferSnapshot => ({ balance: account.balance.toString(), topUp: account.topUp });

export const fromSnapshot = (snapshot: GasBufferSnapshot): GasBufferAccount => ({ balance: BigInt(snapshot.balance), topUp: snapshot.topUp });

const evolve = (_state: GasBufferAccount, event: GasBufferEvent): GasBufferAccount => fromSnapshot(event.data.account);

const decide = (command: GasBufferCommand, state: GasBufferAccount, { now }: { now: Date }): GasBufferEvent[] => {
  const at = now.toISOString();
  const { orgId, chainId } = command;
  switch (command.type) {
    case 'RecordBufferTopUpSigned':
      if (state.topUp?.txHash === command.step.txHash) return [];
      if (state.topUp) throw new DomainError('GAS_BUFFER_TOP_UP_IN_FLIGHT', `the gas buffer's top-up ${state.topUp.txHash} is in flight`);
      if (BigInt(command.step.amount) <= 0n) throw new DomainError('BAD_REQUEST', 'a gas buffer top-up moves a positive amount');
      return [{ type: 'GasBufferTopUpSigned', data: { orgId, chainId, step: command.step, signedAt: at, account: toSnapshot({ ...state, topUp: command.step }) } }];
    case 'RecordBufferTopUpConfirmed': {
      if (!state.topUp) return []; // reported again after a crash: already settled
      const amount = BigInt(state.topUp.amount);
      const account = { balance: state.balance + amount, topUp: null };
      const data = { orgId, chainId, txHash: state.topUp.txHash, amount: amount.toString(), blockNumber: command.blockNumber, fee: command.fee.toString(), confirmedAt: at, account: toSnapshot(account) };
      return [{ type: 'GasBufferTopUpConfirmed', data }];
    }
    case 'RecordBufferTopUpFailed':
      if (!state.topUp) return [];
      return [{ type: 'GasBufferTopUpFailed', data: { orgId, chainId, txHash: state.topUp.txHash, error: command.error, failedAt: at, account: toSnapshot({ ...state, topUp: null }) } }];
    case 'DrawGas':
      if (command.fee <= 0n) throw new DomainError('BAD_REQUEST', 'a draw from the gas buffer takes a positive fee');
      if (state.balance < command.fee) {
        throw new DomainError('GAS_BUFFER_SHORT', `the gas buffer holds ${state.balance}, the withdrawal's fee is ${command.fee}`, { balance: state.balance.toString(), fee: command.fee.toString() });
      }
      return [
        {
          type: 'GasBufferDrawn',
          data: { orgId, chainId, withdrawalId: command.withdrawalId, fee: command.fee.toString(), drawnAt: at, account: toSnapshot({ ...state, balance: state.balance - command.fee }) },
        },
      ];
  }
};

export const gasBufferDecider: Decider<GasBufferCommand, GasBufferEvent, GasBufferAccount> = {
  initialState: EMPTY_GAS_BUFFER,
  evolve,
  decide,
};
