import type { DomainEvent } from '../decider.js';
import type { DepositRef } from '../deposit/deposit.js';

/**
 * Moving one confirmed deposit from its deposit address to the organization's settlement wallet
 * (EVM and Tron). A native sweep pays its own fee out of the deposit; a token sweep first gets
 * exactly the gas it needs from the organization's gas wallet (a "top-up"). Every transaction is
 * recorded signed (raw, hash, nonce) *before* it is broadcast, so after a crash the same bytes are
 * looked up and sent again, never a second, different transaction for the same step.
 */
export type SweepPlan = DepositRef & {
  orgId: string;
  tokenId: string;
  kind: 'native' | 'token';
  /** 'native' or the token contract, as the gateway names assets */
  asset: string;
  /** the deposit, base units */
  amount: string;
  depositAddress: string;
  /** the receive child (0/i) that holds the deposit address: the signer signs the sweep with it */
  depositIndex: number;
  settlementAddress: string;
  /** the organization's wallet index in the key space: settlement 2/i, gas 3/i */
  walletIndex: number;
  /** token sweeps only */
  gasWalletAddress: string | null;
};

/** A transaction as signed, before anything is sent. */
export type SignedStep = {
  txHash: string;
  raw: string;
  /** EVM nonce; null on Tron (no nonces: the reference block and timestamp make it unique) */
  nonce: number | null;
  from: string;
  to: string;
  /** what it moves, base units of its asset */
  amount: string;
  /** the fee estimated when it was signed, native base units */
  estimatedFee: string;
};

export type SweepStep = 'topUp' | 'sweep';

export type SweepEvent =
  | DomainEvent<'SweepScheduled', SweepPlan & { scheduledAt: string }>
  | DomainEvent<'SweepSkipped', DepositRef & { reason: string; fee: string; skippedAt: string }>
  | DomainEvent<'SweepWaitingForGas', DepositRef & { required: string; available: string; since: string }>
  /** `step`: the signed transaction; the events' `txHash` is always the deposit's, `transactionHash` the step's */
  | DomainEvent<'GasTopUpSigned', DepositRef & { step: SignedStep; signedAt: string }>
  | DomainEvent<'GasTopUpBroadcast', DepositRef & { transactionHash: string; broadcastAt: string }>
  | DomainEvent<'GasTopUpConfirmed', DepositRef & { transactionHash: string; blockNumber: number; fee: string; confirmedAt: string }>
  | DomainEvent<'SweepSigned', DepositRef & { step: SignedStep; signedAt: string }>
  | DomainEvent<'SweepBroadcast', DepositRef & { transactionHash: string; broadcastAt: string }>
  /** `feeCharged`: what the organization's ledger was charged (the fee of a native sweep; '0' for a token sweep, whose gas the gas wallet paid) */
  | DomainEvent<'SweepConfirmed', DepositRef & { transactionHash: string; blockNumber: number; fee: string; feeCharged: string; confirmedAt: string }>
  | DomainEvent<'SweepFailed', DepositRef & { step: SweepStep | 'plan'; transactionHash: string | null; error: string; failedAt: string }>;

export type SweepStatus =
  | 'Scheduled'
  | 'WaitingForGas'
  | 'TopUpSigned'
  | 'TopUpBroadcast'
  | 'TopUpConfirmed'
  | 'SweepSigned'
  | 'SweepBroadcast'
  | 'Confirmed'
  | 'Skipped'
  | 'Failed';

export type Sweep =
  | { status: 'None' }
  | {
      status: SweepStatus;
      plan: SweepPlan;
      topUp: SignedStep | null;
      /** the top-up's fee as mined (what the gas wallet paid beyond the top-up) */
      topUpFee: string | null;
      sweep: SignedStep | null;
      /** the sweep's fee as mined */
      fee: string | null;
      /** why it waits, was skipped or failed */
      reason: string | null;
    };

export const initialSweep: Sweep = { status: 'None' };

export const TERMINAL_SWEEP_STATUSES: readonly SweepStatus[] = ['Confirmed', 'Skipped', 'Failed'];

export const isTerminal = (sweep: Sweep): boolean => sweep.status !== 'None' && TERMINAL_SWEEP_STATUSES.includes(sweep.status);

const stepOf = ({ txHash, raw, nonce, from, to, amount, estimatedFee }: SignedStep): SignedStep => ({ txHash, raw, nonce, from, to, amount, estimatedFee });

type ScheduledData = Extract<SweepEvent, { type: 'SweepScheduled' }>['data'];

/**
 * The plan a SweepScheduled starts, its fields named one by one, in the plan's order: rest and
 * spread of the event's data made V8 build the plan the slow way (as it did for withdrawals).
 */
const planOf = (data: ScheduledData): SweepPlan => ({
  chainId: data.chainId,
  txHash: data.txHash,
  index: data.index,
  orgId: data.orgId,
  tokenId: data.tokenId,
  kind: data.kind,
  asset: data.asset,
  amount: data.amount,
  depositAddress: data.depositAddress,
  depositIndex: data.depositIndex,
  settlementAddress: data.settlementAddress,
  walletIndex: data.walletIndex,
  gasWalletAddress: data.gasWalletAddress,
});

export const evolveSweep = (state: Sweep, event: SweepEvent): Sweep => {
  if (event.type === 'SweepScheduled') return { status: 'Scheduled', plan: planOf(event.data), topUp: null, topUpFee: null, sweep: null, fee: null, reason: null };
  if (state.status === 'None') return state;
  switch (event.type) {
    case 'SweepSkipped':
      return { ...state, status: 'Skipped', reason: event.data.reason };
    case 'SweepWaitingForGas':
      return { ...state, status: 'WaitingForGas', reason: `the gas wallet holds ${event.data.available}, the top-up needs ${event.data.required}` };
    case 'GasTopUpSigned':
      return { ...state, status: 'TopUpSigned', topUp: stepOf(event.data.step), reason: null };
    case 'GasTopUpBroadcast':
      return { ...state, status: 'TopUpBroadcast' };
    case 'GasTopUpConfirmed':
      return { ...state, status: 'TopUpConfirmed', topUpFee: event.data.fee };
    case 'SweepSigned':
      return { ...state, status: 'SweepSigned', sweep: stepOf(event.data.step), reason: null };
    case 'SweepBroadcast':
      return { ...state, status: 'SweepBroadcast' };
    case 'SweepConfirmed':
      return { ...state, status: 'Confirmed', fee: event.data.fee };
    case 'SweepFailed':
      return { ...state, status: 'Failed', reason: event.data.error };
    default: {
      const _never: never = event;
      return state;
    }
  }
};
