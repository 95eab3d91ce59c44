import { sql, type Kysely } from 'kysely';

/**
 * Running totals of the devnet's confirmed state, kept in the transaction that mines a block or
 * reorganizes the chain, so a balance or nonce check reads one row instead of summing the
 * account's whole history:
 *
 * - devnet_balances: per address and asset, what mined transactions brought in, less what signed
 *   mined transactions sent and the fees signed transactions paid once mined or failed (native);
 * - devnet_nonces: per sender, its signed transactions mined or failed (nonces/sequences used).
 *
 * Pending transactions never count here; a check that sees the mempool adds them itself. The
 * totals are filled from the history already mined when this migration runs.
 */
export const up = async (db: Kysely<unknown>): Promise<void> => {
  await db.schema
    .createTable('devnet_balances')
    .addColumn('chain_id', 'text', (column) => column.notNull())
    .addColumn('address', 'text', (column) => column.notNull())
    .addColumn('asset', 'text', (column) => column.notNull())
    .addColumn('amount', sql`numeric(78,0)`, (column) => column.notNull())
    .addPrimaryKeyConstraint('devnet_balances_pkey', ['chain_id', 'address', 'asset'])
    .execute();
  await db.schema
    .createTable('devnet_nonces')
    .addColumn('chain_id', 'text', (column) => column.notNull())
    .addColumn('address', 'text', (column) => column.notNull())
    .addColumn('used', 'integer', (column) => column.notNull())
    .addPrimaryKeyConstraint('devnet_nonces_pkey', ['chain_id', 'address'])
    .execute();

  await sql`
    insert into devnet_balances (chain_id, address, asset, amount)
    select chain_id, address, asset, sum(delta) from (
      select t.chain_id, t.to_address as address, t.asset, t.amount as delta
        from devnet_transfers t join devnet_transactions x on x.chain_id = t.chain_id and x.hash = t.tx_hash
       where x.status = 'mined'
      union all
      select t.chain_id, t.from_address, t.asset, -t.amount
        from devnet_transfers t join devnet_transactions x on x.chain_id = t.chain_id and x.hash = t.tx_hash
       where x.status = 'mined' and x.kind = 'signed'
      union all
      select x.chain_id, x.sender, 'native', -x.fee
        from devnet_transactions x
       where x.kind = 'signed' and x.status in ('mined', 'failed') and x.sender is not null
    ) moved
    group by chain_id, address, asset`.execute(db);
  await sql`
    insert into devnet_nonces (chain_id, address, used)
    select chain_id, sender, count(*) from devnet_transactions
     where kind = 'signed' and status in ('mined', 'failed') and sender is not null
     group by chain_id, sender`.execute(db);
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await db.schema.dropTable('devnet_nonces').execute();
  await db.schema.dropTable('devnet_balances').execute();
};
