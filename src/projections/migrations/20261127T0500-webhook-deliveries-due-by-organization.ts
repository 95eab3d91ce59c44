import { sql, type Kysely } from 'kysely';

/**
 * The dispatcher's claim gives every organization with deliveries due a share (claims.ts): it
 * walks the organizations that have deliveries not parked for a URL, one index descent each, and
 * takes each one's oldest due deliveries. This index serves both, per organization in due order
 * (then insertion order). Parked deliveries (`next_attempt_at` infinity, WAITING_FOR_URL) are left
 * out: an organization without a URL, however many it has waiting, costs the claim nothing.
 */
export const up = async (db: Kysely<unknown>): Promise<void> => {
  await sql`
    create index webhook_deliveries_org_due_idx on webhook_deliveries (org_id, next_attempt_at, seq)
    where status = 'pending' and next_attempt_at < 'infinity'::timestamptz
  `.execute(db);
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await sql`drop index webhook_deliveries_org_due_idx`.execute(db);
};
