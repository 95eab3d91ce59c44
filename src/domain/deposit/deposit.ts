import type { DomainEvent } from '../decider.js';

/**
 * Whether a deposit reaches a ledger: `credit` when it belongs to a user's account and meets the
 * token's minimum; `below_minimum` (SPEC §8) and `unattributed` (no account owns the address) are
 * recorded for the audit trail but never credited.
 */
export type DepositCredit = 'credit' | 'below_minimum' | 'unattributed';

/** One transfer to one of our addresses: chain + transaction + output/log index (ARCHITECTURE invariant 8). */
export type DepositRef = {
  chainId: string;
  txHash: string;
  index: number;
};

export type DepositDetails = DepositRef & {
  /** CAIP-19 */
  tokenId: string;
  /** base units, a decimal string */
  amount: string;
  orgId: string | null;
  externalUserId: string | null;
  accountChainId: string | null;
  toAddress: string;
  destinationTag: number | null;
  senderAddress: string;
  blockNumber: number;
  blockHash: string;
  credit: DepositCredit;
  /**
   * An EVM token deposit whose `index` is the log's index within its transaction. Those recorded
   * before (without it) carry the log's index in its block: the watcher still finds them by their
   * content, so a transfer seen again is never recorded twice (ARCHITECTURE: deposit keys).
   */
  logIndexInTransaction?: true;
};

export type DepositEvent =
  | DomainEvent<'DepositDetected', DepositDetails & { detectedAt: string }>
  | DomainEvent<'DepositConfirmed', DepositRef & { confirmations: number; confirmedAt: string; credited: boolean }>
  | DomainEvent<'DepositReverted', DepositRef & { reason: string; revertedAt: string }>;

type Detected = DepositDetails & { detectedAt: string };

export type Deposit =
  | { status: 'None' }
  | ({ status: 'Detected' } & Detected)
  | ({ status: 'Confirmed'; confirmations: number; confirmedAt: string; credited: boolean } & Detected)
  /** a reorg dropped its block before confirmation; the same transfer may be detected again later */
  | ({ status: 'Reverted'; reason: string; revertedAt: string } & Detected);

export const initialDeposit: Deposit = { status: 'None' };

export const evolveDeposit = (state: Deposit, event: DepositEvent): Deposit => {
  switch (event.type) {
    case 'DepositDetected':
      return { status: 'Detected', ...event.data };
    case 'DepositConfirmed': {
      if (state.status === 'None') return state;
      const { confirmations, confirmedAt, credited } = event.data;
      return { ...state, status: 'Confirmed', confirmations, confirmedAt, credited };
    }
    case 'DepositReverted': {
      if (state.status === 'None') return state;
      return { ...state, status: 'Reverted', reason: event.data.reason, revertedAt: event.data.revertedAt };
    }
    default: {
      const _never: never = event;
      return state;
    }
  }
};

/** The deposit's identity as one string (ledger events and logs name deposits by it). */
export const depositKey = ({ chainId, txHash, index }: DepositRef) => `${chainId}:${txHash}:${index}`;
