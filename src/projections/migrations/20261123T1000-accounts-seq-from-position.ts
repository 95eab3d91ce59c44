import { sql, type Kysely } from 'kysely';

/**
 * accounts.seq was an identity column: a rebuild (rows deleted and replayed) numbered the accounts
 * anew, so the rebuilt table differed from the live one. It becomes the AccountCreated event's global
 * position, as deposits.seq already is: the same on every replay, and still newest-first.
 */
export const up = async (db: Kysely<unknown>): Promise<void> => {
  await sql`alter table accounts alter column seq drop identity if exists`.execute(db);
  await sql`alter table accounts alter column seq set not null`.execute(db);
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await sql`alter table accounts alter column seq add generated always as identity`.execute(db);
};
