import type { Logger } from '../../log.js';

/** How long a sent transaction may stay without an outcome before it is reported, unless CHAINS_CONFIG says otherwise. */
export const DEFAULT_STUCK_AFTER_MS = 30 * 60 * 1000;

export interface StuckTransaction {
  chainId: string;
  txHash: string;
  since: Date;
}

/**
 * Transactions whose outcome stays unknown (in flight, refused, unanswered) longer than
 * `stuckAfterMs`: each is logged at `warn` once per period and counted, never released on a guess.
 * An operator settles them with `ledgergate withdrawals resolve` once the outcome is known.
 */
export class StuckTransactions {
  private readonly open = new Map<string, { chainId: string; since: number; warnedAt: number | null }>();

  constructor(
    private readonly logger: Logger,
    private readonly stuckAfterMs: (chainId: string) => number = () => DEFAULT_STUCK_AFTER_MS,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /** One look at a transaction: `unsettled` while it has no outcome; a settled one is forgotten. */
  observe(chainId: string, txHash: string, unsettled: boolean): void {
    if (!unsettled) {
      this.open.delete(txHash);
      return;
    }
    const now = this.clock().getTime();
    const entry = this.open.get(txHash) ?? { chainId, since: now, warnedAt: null };
    this.open.set(txHash, entry);
    const limit = this.stuckAfterMs(chainId);
    if (now - entry.since < limit) return;
    if (entry.warnedAt !== null && now - entry.warnedAt < limit) return;
    entry.warnedAt = now;
    this.logger.warn('transaction stuck: no outcome yet; the funds stay held until the chain or an operator decides', {
      chainId,
      txHash,
      since: new Date(entry.since).toISOString(),
      minutes: Math.floor((now - entry.since) / 60_000),
    });
  }

  /** the transactions unsettled longer than their chain's limit (for metrics and operators) */
  list(): StuckTransaction[] {
    const now = this.clock().getTime();
    return [...this.open.entries()]
      .filter(([, entry]) => now - entry.since >= this.stuckAfterMs(entry.chainId))
      .map(([txHash, entry]) => ({ chainId: entry.chainId, txHash, since: new Date(entry.since) }));
  }
}
