import { sql } from 'kysely';
import type { ChainDefinition } from '../../catalog/chain.js';
import type { DevnetDb } from './tables.js';

/**
 * What the devnet's state says. Confirmed balances and used nonces are running totals
 * (devnet_balances, devnet_nonces) that mining and reorgs keep in the transaction that changes a
 * transaction's status (totals.ts): a transfer counts while its transaction is mined, a fee while
 * it is mined or failed, so a reorg or a dropped transaction undoes them.
 *
 * `view` chooses which pending transactions count as well (the mempool as a node sees it when it
 * admits or mines a transaction): those queued before `beforeSeq`. `CONFIRMED` counts none.
 */
export interface StateView {
  beforeSeq: string | null;
}
export const CONFIRMED: StateView = { beforeSeq: null };
/** every pending transaction: what a new broadcast is admitted against */
export const WHOLE_MEMPOOL: StateView = { beforeSeq: '9223372036854775807' };

const toBigInt = (value: string | number | bigint | null | undefined) => BigInt(value ?? 0);

/** The pending transactions in view, found by the mempool's index (never by an account's history). */
const pendingInView = (chainId: string, view: StateView) => sql`
  select x.hash, x.kind, x.sender, x.fee, x.error from devnet_transactions x
   where x.chain_id = ${chainId} and x.status = 'pending' and x.seq < ${view.beforeSeq}::bigint`;

/**
 * Their transfers, each transaction's found by its key (a lateral join with no address in it: the
 * planner cannot walk an address's history instead).
 */
const pendingTransfers = (chainId: string) => sql`
  select p.kind, p.error, t.from_address, t.to_address, t.asset, t.amount from pending p
   cross join lateral (select t.from_address, t.to_address, t.asset, t.amount from devnet_transfers t where t.chain_id = ${chainId} and t.tx_hash = p.hash) t`;

/**
 * Account chains (EVM, Tron, XRP): the confirmed running total, plus what the pending transactions
 * in view change. Pending credits (the faucet's minted funds) count as received, so the faucet can
 * spend them in the same block; other pending incoming funds do not, as on a real node. One
 * statement: a read without the chain's lock sees one state.
 */
export const accountBalance = async (db: DevnetDb, chainId: string, address: string, asset: string, view: StateView): Promise<bigint> => {
  const { rows } = await sql<{ confirmed: string | null; incoming: string; outgoing: string; fees: string }>`
    with pending as materialized (${pendingInView(chainId, view)}),
         moving as materialized (${pendingTransfers(chainId)})
    select
      (select b.amount from devnet_balances b where b.chain_id = ${chainId} and b.address = ${address} and b.asset = ${asset}) as confirmed,
      (select coalesce(sum(m.amount), 0) from moving m where m.kind = 'credit' and m.to_address = ${address} and m.asset = ${asset}) as incoming,
      (select coalesce(sum(m.amount), 0) from moving m where m.kind = 'signed' and m.error is null and m.from_address = ${address} and m.asset = ${asset}) as outgoing,
      (select coalesce(sum(p.fee), 0) from pending p where p.kind = 'signed' and p.sender = ${address}) as fees
  `.execute(db);
  const row = rows[0]!;
  return toBigInt(row.confirmed) + toBigInt(row.incoming) - toBigInt(row.outgoing) - (asset === 'native' ? toBigInt(row.fees) : 0n);
};

/** Transactions an account has signed that used up a nonce/sequence: mined or failed (the running total), and pending ones in view. */
export const usedNonces = async (db: DevnetDb, chainId: string, sender: string, view: StateView): Promise<number> => {
  const { rows } = await sql<{ confirmed: number | null; pending: string }>`
    with pending as materialized (${pendingInView(chainId, view)})
    select
      (select n.used from devnet_nonces n where n.chain_id = ${chainId} and n.address = ${sender}) as confirmed,
      (select count(*) from pending p where p.kind = 'signed' and p.sender = ${sender}) as pending
  `.execute(db);
  const row = rows[0]!;
  return (row.confirmed ?? 0) + Number(row.pending);
};

/** XRPL accounts start at sequence 1 here (a real ledger starts them at the ledger index that funded them). */
export const firstNonce = (chain: ChainDefinition): number => (chain.family === 'xrp' ? 1 : 0);

export interface OutputRow {
  txHash: string;
  index: number;
  address: string;
  amount: bigint;
  /** null while the creating transaction is pending */
  blockNumber: number | null;
}

/**
 * Bitcoin outputs that exist in the view: made by a mined transaction, or a pending one in view
 * (a node relays chains of unconfirmed transactions). Outputs of failed or dropped ones do not.
 */
const existingOutputs = (view: StateView) => sql`
  select t.tx_hash, t.transfer_index, t.to_address, t.amount, x.block_number
    from devnet_transfers t
    join devnet_transactions x on x.chain_id = t.chain_id and x.hash = t.tx_hash
   where (x.status = 'mined' or (x.status = 'pending' and x.seq < ${view.beforeSeq}::bigint))`;

/** Spends that hold in the view: by a mined or failed transaction, or a pending one in view. */
const holdingSpends = (view: StateView) => sql`
  select s.chain_id, s.output_tx_hash, s.output_index, s.tx_hash
    from devnet_spends s
    join devnet_transactions x on x.chain_id = s.chain_id and x.hash = s.tx_hash
   where (x.status in ('mined', 'failed') or (x.status = 'pending' and x.seq < ${view.beforeSeq}::bigint))`;

interface OutputQueryRow {
  tx_hash: string;
  transfer_index: number;
  to_address: string;
  amount: string;
  block_number: number | null;
}

const toOutput = (row: OutputQueryRow): OutputRow => ({
  txHash: row.tx_hash,
  index: row.transfer_index,
  address: row.to_address,
  amount: BigInt(row.amount),
  blockNumber: row.block_number,
});

/** Unspent outputs of these addresses in the view, oldest first. */
export const unspentOutputsOf = async (db: DevnetDb, chainId: string, addresses: readonly string[], view: StateView, limit = 1000): Promise<OutputRow[]> => {
  if (addresses.length === 0) return [];
  const { rows } = await sql<OutputQueryRow>`
    select o.* from (${existingOutputs(view)} and t.chain_id = ${chainId} and t.to_address in (${sql.join(addresses)})) o
     where not exists (select 1 from (${holdingSpends(view)}) s
                        where s.chain_id = ${chainId} and s.output_tx_hash = o.tx_hash and s.output_index = o.transfer_index)
     order by o.block_number nulls last, o.tx_hash, o.transfer_index
     limit ${limit}
  `.execute(db);
  return rows.map(toOutput);
};

/** One output, if it exists in the view (spent or not): what a spending transaction's signature commits to. */
export const outputAt = async (db: DevnetDb, chainId: string, txHash: string, index: number, view: StateView): Promise<OutputRow | undefined> => {
  const { rows } = await sql<OutputQueryRow>`${existingOutputs(view)} and t.chain_id = ${chainId} and t.tx_hash = ${txHash} and t.transfer_index = ${index}`.execute(db);
  return rows[0] ? toOutput(rows[0]) : undefined;
};

/** The transaction that spends an output in the view, other than those in `except`. */
export const spenderOf = async (db: DevnetDb, chainId: string, txHash: string, index: number, view: StateView, except: readonly string[]): Promise<string | undefined> => {
  const { rows } = await sql<{ tx_hash: string }>`
    select s.tx_hash from (${holdingSpends(view)}) s
     where s.chain_id = ${chainId} and s.output_tx_hash = ${txHash} and s.output_index = ${index} and s.tx_hash not in (${sql.join(except)})
     limit 1
  `.execute(db);
  return rows[0]?.tx_hash;
};

/** Pending transactions spending any of these outputs (what a new Bitcoin transaction would replace). */
export const pendingSpendersOf = async (db: DevnetDb, chainId: string, outputs: readonly { txHash: string; index: number }[]): Promise<{ hash: string; raw: string | null; fee: bigint }[]> => {
  if (outputs.length === 0) return [];
  const pairs = outputs.map((output) => sql`(${output.txHash}, ${output.index})`);
  const { rows } = await sql<{ hash: string; raw: string | null; fee: string }>`
    select distinct x.hash, x.raw, x.fee from devnet_spends s
      join devnet_transactions x on x.chain_id = s.chain_id and x.hash = s.tx_hash
     where s.chain_id = ${chainId} and x.status = 'pending' and (s.output_tx_hash, s.output_index) in (${sql.join(pairs)})
  `.execute(db);
  return rows.map((row) => ({ hash: row.hash, raw: row.raw, fee: BigInt(row.fee) }));
};

export const requiresDestinationTag = async (db: DevnetDb, chainId: string, address: string): Promise<boolean> => {
  const row = await db
    .selectFrom('devnet_accounts')
    .select('requires_destination_tag')
    .where('chain_id', '=', chainId)
    .where('address', '=', address)
    .executeTakeFirst();
  return row?.requires_destination_tag ?? false;
};

/** Bitcoin: the confirmed balance of an address is the sum of its confirmed, unspent outputs. */
export const bitcoinBalance = async (db: DevnetDb, chainId: string, address: string): Promise<bigint> => {
  const { rows } = await sql<{ total: string }>`
    select coalesce(sum(o.amount), 0) as total from (${existingOutputs(CONFIRMED)} and t.chain_id = ${chainId} and t.to_address = ${address}) o
     where not exists (select 1 from (${holdingSpends(CONFIRMED)}) s
                        where s.chain_id = ${chainId} and s.output_tx_hash = o.tx_hash and s.output_index = o.transfer_index)
  `.execute(db);
  return BigInt(rows[0]!.total);
};
