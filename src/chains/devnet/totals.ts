import { sql } from 'kysely';
import type { DevnetDb } from './tables.js';

/**
 * Keeps the confirmed running totals (devnet_balances, devnet_nonces; see ledger.ts) in step with
 * the transactions' statuses, inside the transaction that changes them: `+1` once the listed
 * transactions are mined or failed, `-1` before a reorg drops them. Two statements, whatever the
 * number of transactions: what they moved is computed from their rows, as the history is.
 */
export const countInTotals = async (trx: DevnetDb, chainId: string, hashes: readonly string[], sign: 1 | -1): Promise<void> => {
  if (hashes.length === 0) return;
  const listed = sql`x.chain_id = ${chainId} and x.hash = any(${[...hashes]}::text[])`;
  await sql`
    insert into devnet_balances as b (chain_id, address, asset, amount)
    select ${chainId}, address, asset, ${sign}::int * sum(delta) from (
      select t.to_address as address, t.asset, t.amount as delta
        from devnet_transactions x join devnet_transfers t on t.chain_id = x.chain_id and t.tx_hash = x.hash
       where ${listed} and x.status = 'mined'
      union all
      select t.from_address, t.asset, -t.amount
        from devnet_transactions x join devnet_transfers t on t.chain_id = x.chain_id and t.tx_hash = x.hash
       where ${listed} and x.status = 'mined' and x.kind = 'signed'
      union all
      select x.sender, 'native', -x.fee
        from devnet_transactions x
       where ${listed} and x.kind = 'signed' and x.status in ('mined', 'failed') and x.sender is not null
    ) moved
    group by address, asset
    on conflict (chain_id, address, asset) do update set amount = b.amount + excluded.amount`.execute(trx);
  await sql`
    insert into devnet_nonces as n (chain_id, address, used)
    select ${chainId}, x.sender, ${sign}::int * count(*)::int from devnet_transactions x
     where ${listed} and x.kind = 'signed' and x.status in ('mined', 'failed') and x.sender is not null
     group by x.sender
    on conflict (chain_id, address) do update set used = n.used + excluded.used`.execute(trx);
};
