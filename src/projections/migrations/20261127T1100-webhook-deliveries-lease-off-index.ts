import { sql, type Kysely } from 'kysely';

/**
 * A claim's lease in a column no index holds, so a claim is a heap-only (HOT) update: no entry in
 * any of the outbox's indexes. Until now a claim moved `next_attempt_at` to the lease's expiry,
 * and `next_attempt_at` is in webhook_deliveries_org_due_idx, so every claim wrote a new entry
 * into each of the table's indexes (about 85 % of a claim's time). Now a claim sets
 * `leased_until` and `claim_token` and leaves `next_attempt_at` at when the attempt fell due; the
 * claim skips rows whose lease has not expired. Deliveries in flight when this runs keep their
 * lease: their `next_attempt_at` is its expiry.
 *
 * A HOT update needs room for the new version on the row's own page. Claims take an
 * organization's oldest due deliveries together, often every row of a page in one statement (whose
 * own old versions cannot be pruned before it commits), so new pages are filled to half: a claim's
 * versions fit beside the rows, and once the claim has committed, the page's pruning makes room
 * for the outcome's versions in turn. Pages already written keep what they hold.
 */
export const up = async (db: Kysely<unknown>): Promise<void> => {
  await sql`alter table webhook_deliveries add column leased_until timestamptz`.execute(db);
  await sql`update webhook_deliveries set leased_until = next_attempt_at where claim_token is not null`.execute(db);
  await sql`
    alter table webhook_deliveries add constraint webhook_deliveries_lease_check check ((claim_token is null) = (leased_until is null))
  `.execute(db);
  await sql`alter table webhook_deliveries set (fillfactor = 50)`.execute(db);
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await sql`alter table webhook_deliveries reset (fillfactor)`.execute(db);
  await sql`update webhook_deliveries set next_attempt_at = leased_until where leased_until is not null`.execute(db);
  await sql`alter table webhook_deliveries drop column leased_until`.execute(db);
};
