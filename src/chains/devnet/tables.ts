import type { ColumnType, Generated, Kysely } from 'kysely';
import type { Database } from '../../db/database.js';

/**
 * The devnet's tables (migration 20261122T1300-devnet). They are the devnet's own, not read models:
 * the service's `Database` does not list them, and the devnet reaches them through `devnetDb`.
 * numeric(78,0) columns travel as decimal strings (pg's choice) and become bigint at the edges.
 */
export interface DevnetChainsTable {
  chain_id: string;
  head_number: number;
  /** the salt of block hashes: each reorg bumps it, so replaced blocks get new hashes */
  reorg_count: Generated<number>;
  /** counts the devnet's own transactions (credits, external deposits, faucet timestamps): unique hashes */
  synthetic_count: Generated<number>;
  fault: 'broadcast_error' | 'revert' | null;
  fault_remaining: Generated<number>;
}

export interface DevnetBlocksTable {
  chain_id: string;
  number: number;
  hash: string;
  parent_hash: string;
  timestamp: ColumnType<Date, Date, Date>;
}

export type DevnetTransactionKind = 'signed' | 'credit' | 'external';
export type DevnetTransactionStatus = 'pending' | 'mined' | 'failed' | 'dropped';

export interface DevnetTransactionsTable {
  chain_id: string;
  hash: string;
  /** mempool order */
  seq: ColumnType<string, string | undefined, string>;
  /** signed: broadcast or the faucet's; credit: minted to the faucet; external: a deposit from an address the devnet holds no key for */
  kind: DevnetTransactionKind;
  raw: string | null;
  status: DevnetTransactionStatus;
  block_number: number | null;
  sender: string | null;
  nonce: number | null;
  /** what mining charges the sender (native base units) */
  fee: string;
  /** pending: why it will fail when mined (a revert fault); failed/dropped: why it did */
  error: string | null;
}

export interface DevnetTransfersTable {
  chain_id: string;
  tx_hash: string;
  position: number;
  transfer_index: number;
  from_address: string;
  to_address: string;
  asset: string;
  amount: string;
  destination_tag: ColumnType<string | null, number | null, number | null>;
}

export interface DevnetSpendsTable {
  chain_id: string;
  tx_hash: string;
  output_tx_hash: string;
  output_index: number;
}

export interface DevnetAccountsTable {
  chain_id: string;
  address: string;
  requires_destination_tag: boolean;
}

/** migration 20261126T1700: confirmed balances kept as running totals (mining and reorgs keep them) */
export interface DevnetBalancesTable {
  chain_id: string;
  address: string;
  asset: string;
  amount: string;
}

/** migration 20261126T1700: nonces/sequences used by mined or failed signed transactions, per sender */
export interface DevnetNoncesTable {
  chain_id: string;
  address: string;
  used: number;
}

export interface DevnetDatabase {
  devnet_chains: DevnetChainsTable;
  devnet_blocks: DevnetBlocksTable;
  devnet_transactions: DevnetTransactionsTable;
  devnet_transfers: DevnetTransfersTable;
  devnet_spends: DevnetSpendsTable;
  devnet_accounts: DevnetAccountsTable;
  devnet_balances: DevnetBalancesTable;
  devnet_nonces: DevnetNoncesTable;
}

export type DevnetDb = Kysely<DevnetDatabase>;

/** The service's database seen with the devnet's tables: the same instance and pool, typed for them. */
export const devnetDb = (db: Kysely<Database>): DevnetDb => db as unknown as DevnetDb;
