import type { ChainFamily } from '../../catalog/chain.js';
import { findToken } from '../../catalog/tokens.js';
import { isTerminal, type Withdrawal } from '../../domain/withdrawal/withdrawal.js';

/**
 * How many of an organization's withdrawals on one chain may be in flight at once: each chain
 * family's rule, in one place.
 */
export type InFlightPolicy =
  /** Bitcoin: one at a time (its transactions spend the organization's outputs) */
  | 'one-at-a-time'
  /**
   * EVM, XRP: consecutive nonces (sequences) from one wallet in flight together, each transaction
   * signed at the next one and recorded before it is sent, never at a nonce another recorded one holds
   */
  | 'pipelined'
  /** Tron: no nonces; its transactions do not depend on one another */
  | 'parallel';

export const inFlightPolicyOf = (family: ChainFamily): InFlightPolicy => {
  switch (family) {
    case 'bitcoin':
      return 'one-at-a-time';
    case 'evm':
    case 'xrp':
      return 'pipelined';
    case 'tron':
      return 'parallel';
  }
};

/** Where one withdrawal stands after a step of the processor (./advance.ts's progress). */
export type StepOutcome = { outcome: 'finished' } | { outcome: 'waiting'; for: 'gas' | 'funds' | 'confirmations' } | { outcome: 'deferred' };

/**
 * Whether an organization's later withdrawals may go ahead while this one is where `step` left
 * it. A finished one never holds them. Under the pipelined and parallel rules, one waiting for
 * confirmations (its transaction recorded and followed, or its gas top-up on its way) lets them
 * go: each takes the next nonce above every recorded one (OrganizationInFlight). One waiting for
 * funds or for gas the gas wallet lacks, put off, or failing holds the later ones back: they would
 * only wait for the same, or overtake it for the organization's funds.
 */
export const letsLaterOnesGo = (policy: InFlightPolicy, step: StepOutcome): boolean => {
  if (step.outcome === 'finished') return true;
  if (policy === 'one-at-a-time') return false;
  return step.outcome === 'waiting' && step.for === 'confirmations';
};

/** What the organization's other withdrawals with a recorded transaction still unsettled hold of its sending wallet. */
export interface OrganizationInFlight {
  /** base units of `asset` ('native' or a token contract) their transactions spend; fees count as native */
  committed(asset: string): bigint;
  /** one past the highest nonce (sequence) they were recorded at; 0 when none */
  nonceFloor: number;
}

export const NOTHING_IN_FLIGHT: OrganizationInFlight = { committed: () => 0n, nonceFloor: 0 };

interface Entry {
  orgId: string;
  asset: string;
  amount: bigint;
  fee: bigint;
  nonce: number | null;
}

/**
 * The processor's book of its chain's withdrawals in flight: each one's recorded, unsettled
 * transaction (what it spends, its nonce), noted as the processor last read its stream. A mined
 * transaction not yet at depth still counts: the book errs on holding too much (a later one waits
 * for funds a little longer), never too little.
 */
export class InFlightBook {
  private readonly entries = new Map<string, Entry>();
  private readonly seen = new Set<string>();

  /** whether the withdrawal's stream was read since it joined the work list */
  knows(id: string): boolean {
    return this.seen.has(id);
  }

  /** the withdrawal as last read: in flight while it has a recorded transaction and no outcome */
  note(id: string, withdrawal: Withdrawal): void {
    this.seen.add(id);
    const signed = withdrawal.status === 'None' || isTerminal(withdrawal.status) ? undefined : withdrawal.signedTransaction;
    if (withdrawal.status === 'None' || !signed) {
      this.entries.delete(id);
      return;
    }
    const token = findToken(withdrawal.tokenId);
    const asset = !token || token.kind === 'native' ? 'native' : token.address;
    this.entries.set(id, { orgId: withdrawal.orgId, asset, amount: BigInt(withdrawal.amount), fee: BigInt(signed.fee), nonce: signed.nonce });
  }

  /** the withdrawal has no recorded transaction (known without reading its stream) */
  noteUnsigned(id: string): void {
    this.seen.add(id);
    this.entries.delete(id);
  }

  forget(id: string): void {
    this.entries.delete(id);
    this.seen.delete(id);
  }

  /** what the organization's withdrawals other than `id` hold */
  of(orgId: string, id: string): OrganizationInFlight {
    const others = [...this.entries].filter(([other, entry]) => other !== id && entry.orgId === orgId).map(([, entry]) => entry);
    const nonces = others.flatMap((entry) => (entry.nonce === null ? [] : [entry.nonce]));
    return {
      committed: (asset) => others.reduce((sum, entry) => sum + (entry.asset === asset ? entry.amount : 0n) + (asset === 'native' ? entry.fee : 0n), 0n),
      nonceFloor: nonces.length === 0 ? 0 : Math.max(...nonces) + 1,
    };
  }
}
