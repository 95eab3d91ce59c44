import type { ColumnType } from 'kysely';

/**
 * Credited deposits on EVM and Tron chains to be swept (projection `sweepQueue`, one row per
 * deposit, keyed by it), closed by the sweep's final event: a rebuild gives the same rows.
 */
export interface SweepQueueTable {
  chain_id: string;
  tx_hash: string;
  output_index: number;
  /** the global position of DepositConfirmed: the order sweeps start in */
  seq: ColumnType<string, string, never>;
  queued_at: ColumnType<Date, Date, never>;
  /** when the sweep's final event (SweepConfirmed, SweepSkipped, SweepFailed) was recorded */
  done_at: ColumnType<Date | null, Date | null, Date | null>;
}

/**
 * The sweeper's own schedule per queued deposit (no projection: a rebuild leaves it alone). No row
 * means no failure yet and due since it was queued; `done_at` marks a deposit found not to sweep.
 */
export interface SweepAttemptsTable {
  chain_id: string;
  tx_hash: string;
  output_index: number;
  /** failed attempts in a row, which the retry delay grows with */
  attempts: number;
  next_attempt_at: Date;
  done_at: Date | null;
}

/** Every sweep as its stream tells it (projection `sweeps`): what operators look at. Amounts are numeric(78,0) strings. */
export interface SweepsTable {
  chain_id: string;
  tx_hash: string;
  output_index: number;
  org_id: string;
  token_id: string;
  kind: 'native' | 'token';
  /** the deposit */
  amount: string;
  deposit_address: string;
  settlement_address: string;
  gas_wallet_address: string | null;
  /** the SweepStatus of src/domain/sweep */
  status: string;
  /** why it waits, was skipped or failed */
  reason: string | null;
  top_up_tx_hash: string | null;
  top_up_amount: string | null;
  /** what the gas wallet spent on this sweep: the top-up and the top-up's own fee */
  gas_spent: string | null;
  sweep_tx_hash: string | null;
  swept_amount: string | null;
  /** the sweep transaction's fee as mined */
  fee: string | null;
  /** what the organization's ledger was charged (native sweeps) */
  fee_charged: string | null;
  created_at: ColumnType<Date, Date, never>;
  updated_at: ColumnType<Date, Date, Date>;
}
