import type { DomainEvent } from '../decider.js';
import type { DepositRef } from '../deposit/deposit.js';

/**
 * One organization's balance of one token, in base units (CONVENTIONS §5):
 * - `pending`: detected deposits not yet confirmed (not spendable);
 * - `available`: confirmed deposits − held and sent withdrawals − fees (CONTRACT §9);
 * - `held`: the first phase of a two-phase transfer (TigerBeetle's pending): reserved for a
 *   withdrawal in flight, then posted (it left) or voided (back to available).
 * No event may make any of the three negative.
 */
export interface Balances {
  available: bigint;
  pending: bigint;
  held: bigint;
}

export type LedgerState = Balances;

export type FeeReason = 'sweep' | 'withdrawal';

/** Balances as events and the wire carry them: decimal strings of base units. */
export type BalancesData = { available: string; pending: string; held: string };

/**
 * Every ledger event names its ledger and carries the balances it leaves (`balancesAfter`), so
 * the ledger is loaded from its last event alone, however long the stream grows, and a projection
 * needs no other source. Amounts are decimal strings.
 */
type LedgerEntry = {
  orgId: string;
  tokenId: string;
  amount: string;
  occurredAt: string;
  balancesAfter: BalancesData;
};

export type LedgerEvent =
  | DomainEvent<'DepositPending', LedgerEntry & { deposit: DepositRef }>
  | DomainEvent<'DepositPendingReverted', LedgerEntry & { deposit: DepositRef }>
  | DomainEvent<'DepositCredited', LedgerEntry & { deposit: DepositRef }>
  | DomainEvent<'FeeCharged', LedgerEntry & { reason: FeeReason; reference: string }>
  // the two phases of a withdrawal (TigerBeetle's pending / post / void), keyed by the withdrawal:
  // FundsHeld moves available → held; HoldPosted takes held away (the funds left on chain);
  // HoldReleased gives held back to available (failed or cancelled)
  | DomainEvent<'FundsHeld', LedgerEntry & { withdrawalId: string }>
  | DomainEvent<'HoldPosted', LedgerEntry & { withdrawalId: string }>
  | DomainEvent<'HoldReleased', LedgerEntry & { withdrawalId: string }>;

export const ZERO: Balances = { available: 0n, pending: 0n, held: 0n };

/**
 * What an event does to the three balances. One table, read by evolve, by the decider's
 * non-negative check and by the balances projection, so they cannot disagree.
 */
export const balanceChangeOf = (event: LedgerEvent): Balances => {
  const amount = BigInt(event.data.amount);
  switch (event.type) {
    case 'DepositPending':
      return { available: 0n, pending: amount, held: 0n };
    case 'DepositPendingReverted':
      return { available: 0n, pending: -amount, held: 0n };
    case 'DepositCredited':
      return { available: amount, pending: -amount, held: 0n };
    case 'FeeCharged':
      return { available: -amount, pending: 0n, held: 0n };
    case 'FundsHeld':
      return { available: -amount, pending: 0n, held: amount };
    case 'HoldPosted':
      return { available: 0n, pending: 0n, held: -amount };
    case 'HoldReleased':
      return { available: amount, pending: 0n, held: -amount };
    default: {
      const _never: never = event;
      return ZERO;
    }
  }
};

export const addBalances = (a: Balances, b: Balances): Balances => ({
  available: a.available + b.available,
  pending: a.pending + b.pending,
  held: a.held + b.held,
});

export const isNonNegative = (balances: Balances) => balances.available >= 0n && balances.pending >= 0n && balances.held >= 0n;

export const balancesToData = (balances: Balances): BalancesData => ({
  available: balances.available.toString(),
  pending: balances.pending.toString(),
  held: balances.held.toString(),
});

export const balancesFromData = (data: BalancesData): Balances => ({ available: BigInt(data.available), pending: BigInt(data.pending), held: BigInt(data.held) });

export const evolveLedger = (state: LedgerState, event: LedgerEvent): LedgerState => addBalances(state, balanceChangeOf(event));

/** The reason CONTRACT §7's balance.updated gives for a ledger event. */
export const balanceUpdateReason = (event: LedgerEvent): 'deposit' | 'withdrawal' | 'sweep' | 'fee' => {
  switch (event.type) {
    case 'DepositPending':
    case 'DepositPendingReverted':
    case 'DepositCredited':
      return 'deposit';
    case 'FeeCharged':
      return 'fee';
    case 'FundsHeld':
    case 'HoldPosted':
    case 'HoldReleased':
      return 'withdrawal';
    default: {
      const _never: never = event;
      return 'deposit';
    }
  }
};
