import { sql, type Kysely } from 'kysely';

/**
 * A sweeper asks what native coins at one deposit address are still owed to credited deposits
 * (`spareNative`): the deposits of that chain and address, found through this index instead of a
 * scan of every deposit of the chain's coin (a statement that grew with the table: 8 ms a call at
 * 5,000 deposits). The address in lowercase, as EVM addresses are compared.
 */
export const up = async (db: Kysely<unknown>): Promise<void> => {
  await sql`create index deposits_chain_address_idx on deposits (chain_id, lower(to_address)) where credit = 'credit'`.execute(db);
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await sql`drop index deposits_chain_address_idx`.execute(db);
};
