import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../db/database.js';
import type { NamedStatements } from '../db/named-statements.js';
import { timeOrderedUuid } from '../db/time-ordered-uuid.js';

/**
 * The dispatcher's side of the outbox, in SQL. Time is always the database's `now()`, so several
 * dispatcher processes on several hosts agree on what is due and when a lease has expired.
 */

export const INTERRUPTED_ERROR = 'interrupted: the dispatcher stopped before the attempt finished (lease expired)';
const MAX_ERROR_LENGTH = 1000;

/** One attempt a dispatcher now holds the lease on: it alone sends it, until `leased_until`. */
export interface ClaimedDelivery {
  id: string;
  orgId: string;
  type: string;
  body: string;
  eventTimestamp: Date;
  /** this attempt's number (1-based) in the delivery's current schedule */
  attempt: number;
  /** fences the outcome: it is recorded only while the delivery still carries this token; the attempt's id in webhook_attempts */
  claimToken: string;
  /** when the attempt was claimed (the database's clock): its `started_at` in webhook_attempts */
  claimedAt: Date;
  /** the organization's settings at send time */
  webhookUrl: string | null;
  signingSecretEncrypted: string | null;
}

interface ClaimedRow {
  id: string;
  org_id: string;
  event_type: string;
  body: string;
  event_timestamp: Date;
  attempts: number;
  claim_token: string;
  claimed_at: Date;
  webhook_url: string | null;
  webhook_signing_secret_encrypted: string | null;
}

/**
 * Logs attempts that ended without their sender (a lease that expired, a redelivery): `rows`
 * selects (attempt id, delivery id, attempt number, started at). An attempt already logged keeps
 * its row (its sender recorded it first); a sender that records later overwrites this one with
 * what really happened (recordAttemptOutcomes).
 */
export const logInterruptedAttempts = (rows: RawBuilder<unknown>, error: string = INTERRUPTED_ERROR) => sql`
  insert into webhook_attempts (id, delivery_id, attempt, started_at, finished_at, error)
  select ended.id, ended.delivery_id, ended.attempt, ended.started_at, now(), ${error}
  from (${rows}) as ended (id, delivery_id, attempt, started_at)
  on conflict (delivery_id, id) do nothing
`;

/**
 * Where the next claim starts its round over the organizations: after the last organization the
 * previous claim gave a share to (the empty string: from the first). Each dispatcher keeps its own.
 */
export type ClaimCursor = string;
export const FIRST_ORGANIZATION: ClaimCursor = '';

/**
 * A pending delivery that is not parked for a URL (due, leased or waiting for its retry): what
 * webhook_deliveries_org_due_idx holds, the outbox's only index of what is due. Literal, so the
 * planner matches the index's predicate; unqualified, so it reads the table of the query it is in.
 */
export const NOT_PARKED = sql`status = 'pending' and next_attempt_at < 'infinity'::timestamptz`;

/**
 * A delivery no dispatcher holds: never claimed, or its lease expired. A claim leaves the indexed
 * columns as they are (its lease is `leased_until`, in no index), so a leased delivery stays in
 * webhook_deliveries_org_due_idx at its due time, and the claim passes over it by this filter.
 */
const UNLEASED = sql`(leased_until is null or leased_until <= now())`;

/** A delivery a dispatcher may attempt now: not parked, due, and held by none. Unqualified, as NOT_PARKED. */
const DUE_NOW = sql`${NOT_PARKED} and next_attempt_at <= now() and ${UNLEASED}`;

/**
 * The organizations with deliveries not parked, in one round starting after `cursor`: those after
 * it in order, then from the first up to it. A loose index scan: one descent of
 * webhook_deliveries_org_due_idx per organization, read only as far as the claim needs.
 */
const organizationsInRound = (cursor: ClaimCursor) => sql`
  after_cursor (org_id) as (
    (select org_id from webhook_deliveries where ${NOT_PARKED} and org_id > ${cursor} order by org_id limit 1)
    union all
    select (select next.org_id from webhook_deliveries as next where ${NOT_PARKED} and next.org_id > previous.org_id order by next.org_id limit 1)
    from after_cursor as previous where previous.org_id is not null
  ), up_to_cursor (org_id) as (
    (select org_id from webhook_deliveries where ${NOT_PARKED} and org_id <= ${cursor} order by org_id limit 1)
    union all
    select (select next.org_id from webhook_deliveries as next where ${NOT_PARKED} and next.org_id > previous.org_id and next.org_id <= ${cursor} order by next.org_id limit 1)
    from up_to_cursor as previous where previous.org_id is not null
  ), round (org_id) as (
    select org_id from after_cursor where org_id is not null
    union all
    select org_id from up_to_cursor where org_id is not null
  )
`;

/** An organization's due deliveries not leased, as far as `limit`: its index entries in due order, read no further. */
const dueOf = (orgId: RawBuilder<unknown>, limit: RawBuilder<unknown>, from: RawBuilder<unknown> = sql`true`) => sql`
  select delivery.next_attempt_at, delivery.seq from webhook_deliveries as delivery
  where delivery.org_id = ${orgId} and ${DUE_NOW} and ${from}
  order by delivery.next_attempt_at, delivery.seq
  limit ${limit}
`;

/**
 * From an organization's first due delivery not leased on, in due order: an index condition, so the
 * entries before it are not read again. Its head holds what its sends in flight lease and the old
 * entries of what was just delivered (an outcome moves a delivery out of the due index's predicate,
 * and its entry there stays until a scan finds it dead to every snapshot): under load, several
 * hundred entries, each checked in the heap. Within one statement (one snapshot, one `now()`) none
 * of those can be taken, so a pass that starts at the first it counted skips only what it would
 * pass over.
 */
const fromFirstDue = (at: RawBuilder<unknown>, seq: RawBuilder<unknown>) => sql`(delivery.next_attempt_at, delivery.seq) >= (${at}, ${seq})`;

/**
 * Claims up to `limit` due deliveries in one statement: it counts the attempt and takes a lease
 * (`leased_until` = now + `leaseMs`: a heap-only update, no index entry written), and logs as interrupted the attempt of a dispatcher that
 * vanished mid-send (its lease expired; that attempt counted). `skip locked` lets several
 * dispatchers claim side by side without waiting on, or taking, each other's rows.
 *
 * A fair share per organization: the claim goes round the organizations with deliveries due (at
 * most `limit` of them, starting after `cursor`) and takes every organization's first before any
 * organization's second, and so on up to `limit`, each organization's oldest due first (then in
 * insertion order). So each gets at least `limit` ÷ their number (rounded down) when it has that
 * many due, and what an organization with fewer due leaves goes to the others in the same claim:
 * one organization's backlog, however long, never holds another's deliveries back until it is
 * sent (both are sent side by side), and beside another's steady stream it still fills whole
 * claims. Alone, an organization gets the whole claim.
 *
 * To share the claim out, each organization's due deliveries are counted first only as far as an
 * even share and one more (its index entries in order): when those counts fill the claim, no
 * organization's share can go beyond it, so counting further would change nothing. Only when
 * they leave part of the claim unused are the organizations that reached that count counted on,
 * as far as the claim could take. So a claim reads about twice its own size of entries, not its
 * size for every organization.
 *
 * An attempt's row in webhook_attempts is written once, when it ends (recordAttemptOutcomes),
 * not opened here and completed there: one write of the attempt log per attempt instead of two.
 * The claim's time is the delivery's `updated_at` (nothing else writes a leased delivery), so an
 * attempt logged later, by its sender or as interrupted, still starts when it was claimed.
 */
export const claimFairShares = async (
  db: Kysely<Database>,
  options: { limit: number; maxAttempts: number; leaseMs: number; cursor?: ClaimCursor },
  /** where the claim runs as a named statement (planned once per connection) instead of through `db` */
  named?: NamedStatements,
): Promise<FairClaim> => {
  const cursor = options.cursor ?? FIRST_ORGANIZATION;
  const claim = sql<ClaimedRow & { round_end: string; share_filled: boolean }>`
    with recursive ${organizationsInRound(cursor)},
    even_share as (
      -- an even share of the claim among the round's first organizations, and one more: how far each is counted first
      select (${options.limit} + count(*)::integer - 1) / greatest(count(*)::integer, 1) + 1 as counted
      from (select 1 from round limit ${options.limit}) as first_organizations
    ), first_counts as (
      -- how many each has due, counted only as far as an even share and one more: its index entries in order, read no further;
      -- and where the first of them lies, where the passes below start
      select round.org_id, due.count, due.first_due_at, due.first_seq
      from round cross join lateral (
        select count(*)::integer as count, min(due_rows.next_attempt_at) as first_due_at,
               (array_agg(due_rows.seq order by due_rows.next_attempt_at, due_rows.seq))[1] as first_seq
        from (
          ${dueOf(sql`round.org_id`, sql`(select counted from even_share)`)}
        ) as due_rows
      ) as due
      where due.count > 0
      limit ${options.limit}
    ), short as (
      -- the shares so counted leave part of the claim unused (some organizations have fewer due): count further
      select coalesce(sum(count), 0) < ${options.limit} as short from first_counts
    ), due_organizations as (
      -- an organization counted to the end of its even share and one more is counted on, as far as a claim could take, only if the claim is short
      -- (a case, so the count further is not even started otherwise)
      select org_id, coalesce(recount, count) as due_count, recount is null and count = counted as counted_in_part, first_due_at, first_seq
      from (
        select first_counts.org_id, first_counts.count, even_share.counted, first_counts.first_due_at, first_counts.first_seq,
               case when short.short and first_counts.count = even_share.counted
                    then (select count(*)::integer from (${dueOf(sql`first_counts.org_id`, sql`${options.limit}`, fromFirstDue(sql`first_counts.first_due_at`, sql`first_counts.first_seq`))}) as due_rows) end as recount
        from first_counts cross join even_share cross join short
        offset 0 -- not pulled up: the count further runs once per organization, not once per use of its result
      ) as counted
    ), share as (
      select coalesce(max(org_id) filter (where org_id <= ${cursor}), max(org_id)) as round_end
      from due_organizations
    ), slots as (
      -- every organization's first before any organization's second, in the round's order, up to the limit
      select due_organizations.org_id, count(*)::integer as taken, min(due_organizations.due_count) as due_count,
             bool_or(due_organizations.counted_in_part) as counted_in_part,
             min(due_organizations.first_due_at) as first_due_at, min(due_organizations.first_seq) as first_seq
      from (
        select due_organizations.org_id
        from due_organizations
        cross join lateral generate_series(1, due_organizations.due_count) as place
        order by place, due_organizations.org_id <= ${cursor}, due_organizations.org_id
        limit ${options.limit}
      ) as slot
      join due_organizations using (org_id)
      group by due_organizations.org_id
    ), due as (
      -- each organization's slots, locked where they are read, its oldest due first (then in insertion order)
      select pick.id, pick.version, pick.interrupted_claim, pick.interrupted_attempt, pick.interrupted_started_at, slots.taken, slots.taken < slots.due_count or slots.counted_in_part as more_due
      from slots
      cross join lateral (
        select delivery.id, delivery.ctid as version, delivery.claim_token as interrupted_claim,
               delivery.attempts as interrupted_attempt, delivery.updated_at as interrupted_started_at
        from webhook_deliveries as delivery
        where delivery.org_id = slots.org_id and ${DUE_NOW} and ${fromFirstDue(sql`slots.first_due_at`, sql`slots.first_seq`)}
          and delivery.attempts < ${options.maxAttempts}
        order by delivery.next_attempt_at, delivery.seq
        limit slots.taken
        for update skip locked
      ) as pick
      -- never more than the limit anyway (the slots add up to it at most); said here, it keeps the planner's estimate that small, so the update below finds its rows where they lie (a TID scan per row)
      limit ${options.limit}
    ), claimed as (
      update webhook_deliveries as delivery
      set attempts = delivery.attempts + 1,
          claim_token = ${timeOrderedUuid},
          leased_until = now() + ${options.leaseMs}::double precision * interval '1 millisecond',
          last_status_code = case when due.interrupted_claim is null then delivery.last_status_code end,
          last_error = case when due.interrupted_claim is null then delivery.last_error else ${INTERRUPTED_ERROR} end,
          updated_at = now()
      from due
      -- the version the pick locked, found where it lies: no descent of the primary key per row
      where delivery.ctid = due.version
      returning delivery.id, delivery.org_id, delivery.event_type, delivery.body, delivery.event_timestamp,
                delivery.attempts, delivery.claim_token, delivery.updated_at as claimed_at,
                due.interrupted_claim, due.interrupted_attempt, due.interrupted_started_at, due.taken, due.more_due
    ), interrupted as (
      ${logInterruptedAttempts(sql`select interrupted_claim, id, interrupted_attempt, interrupted_started_at from claimed where interrupted_claim is not null`)}
    )
    select claimed.id, claimed.org_id, claimed.event_type, claimed.body, claimed.event_timestamp, claimed.attempts,
           claimed.claim_token, claimed.claimed_at, organization.webhook_url, organization.webhook_signing_secret_encrypted,
           share.round_end, claimed.more_due and count(*) over (partition by claimed.org_id) >= claimed.taken as share_filled
    from claimed
    cross join share
    left join organizations as organization on organization.id = claimed.org_id
  `.compile(db);
  const rows = named ? await named.rows(claim) : (await db.executeQuery(claim)).rows;
  const deliveries = rows.map((row) => ({
    id: row.id,
    orgId: row.org_id,
    type: row.event_type,
    body: row.body,
    eventTimestamp: row.event_timestamp,
    attempt: row.attempts,
    claimToken: row.claim_token,
    claimedAt: row.claimed_at,
    webhookUrl: row.webhook_url,
    signingSecretEncrypted: row.webhook_signing_secret_encrypted,
  }));
  const first = rows[0];
  if (!first) return { deliveries, cursor, shareFilled: false };
  return { deliveries, cursor: first.round_end, shareFilled: rows.some((row) => row.share_filled) };
};

/** The deliveries of one claim (claimFairShares), its round starting at the first organization. */
export const claimDueDeliveries = async (db: Kysely<Database>, options: { limit: number; maxAttempts: number; leaseMs: number }): Promise<ClaimedDelivery[]> =>
  (await claimFairShares(db, options)).deliveries;

/** What one claim took, and where the next starts. */
export interface FairClaim {
  deliveries: ClaimedDelivery[];
  /** the last organization this claim went to: the next claim's round starts after it */
  cursor: ClaimCursor;
  /** some organization got its whole share and has more due: claim again at once */
  shareFilled: boolean;
}

/**
 * A delivery whose last allowed attempt was interrupted (its lease expired) cannot be claimed
 * again; it is failed here. Answers how many.
 *
 * Only the head of each organization's due deliveries is read, up to its first one a claim could
 * take: an exhausted delivery lies there. Its last attempt was claimed when every delivery before
 * it in due order was leased, exhausted or being claimed (a claim takes an organization's oldest
 * first), and it keeps its place; a delivery before it that a claim could take since (a lease
 * expired with attempts left, a delivery enqueued by a transaction older than that claim) is at
 * the head, so the organization's next claim takes it, and the check after that reaches the
 * exhausted one. So a backlog's due deliveries, however many, are not all read at every check:
 * per organization only what its sends in flight hold at the head.
 */
export const failExhaustedDeliveries = async (db: Kysely<Database>, options: { maxAttempts: number; limit: number }): Promise<number> => {
  const { rows } = await sql<{ id: string }>`
    with recursive ${organizationsInRound(FIRST_ORGANIZATION)},
    exhausted as (
      select stopped.id, stopped.claim_token, stopped.attempts, stopped.updated_at
      from round
      left join lateral (
        -- the organization's first delivery a claim could take: where its claims go on from
        select delivery.next_attempt_at, delivery.seq from webhook_deliveries as delivery
        where delivery.org_id = round.org_id and ${DUE_NOW} and delivery.attempts < ${options.maxAttempts}
        order by delivery.next_attempt_at, delivery.seq
        limit 1
      ) as claimable on true
      cross join lateral (
        select delivery.id, delivery.claim_token, delivery.attempts, delivery.updated_at from webhook_deliveries as delivery
        where delivery.org_id = round.org_id and ${DUE_NOW} and delivery.attempts >= ${options.maxAttempts}
          and (delivery.next_attempt_at, delivery.seq) < (coalesce(claimable.next_attempt_at, 'infinity'::timestamptz), coalesce(claimable.seq, 0))
        order by delivery.next_attempt_at, delivery.seq
        limit ${options.limit}
        for update skip locked
      ) as stopped
      limit ${options.limit}
    ), closed as (
      ${logInterruptedAttempts(sql`select claim_token, id, attempts, updated_at from exhausted where claim_token is not null`)}
    )
    update webhook_deliveries as delivery
    set status = 'failed', next_attempt_at = null, claim_token = null, leased_until = null, last_status_code = null,
        last_error = ${INTERRUPTED_ERROR}, updated_at = now()
    from exhausted
    where delivery.id = exhausted.id
    returning delivery.id
  `.execute(db);
  return rows.length;
};

/** When the dispatcher next has something to do (msUntilNextDue), in milliseconds from now. */
export interface NextDue {
  /** until the earliest pending delivery (or lease) is due */
  ms: number;
  /** until the earliest of those leases expires, when one was read (null otherwise): an attempt that may have been interrupted */
  leaseExpiresInMs: number | null;
}

/**
 * When the earliest pending delivery (or lease) is due, or null when none is pending.
 * The organizations that have deliveries not parked, one descent of the per-organization due index
 * each: each one's first delivery not leased, and, unless that one is due already, the earliest
 * lease among those before it in due order (a claim takes an organization's oldest due first, so
 * its leases are there; one further on is seen within the poll interval all the same). Deliveries
 * waiting for a URL are not in that index, so a store with many organizations without a URL
 * (hundreds of thousands of waiting rows) answers as fast as an empty one. `named`: where it runs
 * as a named statement (planned once per connection) instead of through `db`.
 */
export const msUntilNextDue = async (db: Kysely<Database>, named?: NamedStatements): Promise<NextDue | null> => {
  const query = sql<{ ms: number | null; lease_ms: number | null }>`
    with recursive ${organizationsInRound(FIRST_ORGANIZATION)}
    select (extract(epoch from (min(least(first_free.next_attempt_at, first_lease.leased_until)) - now())) * 1000)::float8 as ms,
           (extract(epoch from (min(first_lease.leased_until) - now())) * 1000)::float8 as lease_ms
    from round
    left join lateral (
      select delivery.next_attempt_at from webhook_deliveries as delivery
      where delivery.org_id = round.org_id and ${NOT_PARKED} and delivery.leased_until is null
      order by delivery.next_attempt_at, delivery.seq
      limit 1
    ) as first_free on true
    cross join lateral (
      select min(delivery.leased_until) as leased_until from webhook_deliveries as delivery
      where delivery.org_id = round.org_id and ${NOT_PARKED} and delivery.leased_until is not null
        and delivery.next_attempt_at <= coalesce(first_free.next_attempt_at, 'infinity'::timestamptz)
        -- not read at all when a delivery not leased is due already: nothing can be earlier than now
        and coalesce(first_free.next_attempt_at, 'infinity'::timestamptz) > now()
    ) as first_lease
  `.compile(db);
  const [row] = named ? await named.rows(query) : (await db.executeQuery(query)).rows;
  return row === undefined || row.ms === null ? null : { ms: row.ms, leaseExpiresInMs: row.lease_ms };
};

export interface AttemptOutcome {
  delivered: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

export type RecordedOutcome = 'delivered' | 'retry' | 'failed' | 'superseded';

/**
 * Records how attempts ended and schedules what follows, in one statement for any number of
 * attempts: delivered; the next retry after `retryDelaysMs[attempt - 1]`; or failed once
 * `retryDelaysMs.length + 1` attempts have been made. `superseded`: the lease was lost meanwhile
 * (it expired and another dispatcher took the next attempt, or the delivery was redelivered), so
 * the delivery is left as it is; the attempt is logged all the same (it was made). Each attempt's
 * row in webhook_attempts is written here, its only write, or overwrites the row a takeover logged
 * for it as interrupted. While the lease was held (nearly always) it is a plain insert: no
 * conflict check first, no confirmation record in the write-ahead log. Answers each attempt's
 * outcome, in the order given.
 */
export const recordAttemptOutcomes = async (
  db: Kysely<Database>,
  attempts: readonly { claim: ClaimedDelivery; outcome: AttemptOutcome }[],
  retryDelaysMs: readonly number[],
): Promise<RecordedOutcome[]> => {
  if (attempts.length === 0) return [];
  const planned = attempts.map(({ claim, outcome }) => {
    const retryDelayMs = retryDelaysMs[claim.attempt - 1];
    const next: Exclude<RecordedOutcome, 'superseded'> = outcome.delivered ? 'delivered' : retryDelayMs === undefined ? 'failed' : 'retry';
    return { claim, outcome, next, retryDelayMs: retryDelayMs ?? 0, error: outcome.error === null ? null : outcome.error.slice(0, MAX_ERROR_LENGTH) };
  });
  const column = <T>(pick: (entry: (typeof planned)[number]) => T) => planned.map(pick);
  const { rows } = await sql<{ claim_token: string }>`
    with outcome as (
      select * from unnest(${column((entry) => entry.claim.id)}::uuid[], ${column((entry) => entry.claim.claimToken)}::uuid[],
                           ${column((entry) => entry.outcome.statusCode)}::integer[], ${column((entry) => entry.error)}::text[],
                           ${column((entry) => Math.round(entry.outcome.durationMs))}::integer[], ${column((entry) => entry.next)}::text[],
                           ${column((entry) => entry.retryDelayMs)}::double precision[],
                           ${column((entry) => entry.claim.attempt)}::integer[], ${column((entry) => entry.claim.claimedAt)}::timestamptz[])
        as outcome (id, claim_token, status_code, error, duration_ms, next, retry_delay_ms, attempt, started_at)
    ), applied as (
      update webhook_deliveries as delivery
      set status = case when outcome.next = 'retry' then 'pending' else outcome.next end,
          next_attempt_at = case when outcome.next = 'retry' then now() + outcome.retry_delay_ms * interval '1 millisecond' end,
          claim_token = null,
          leased_until = null,
          last_status_code = outcome.status_code,
          last_error = outcome.error,
          delivered_at = case when outcome.next = 'delivered' then now() end,
          updated_at = now()
      from outcome
      where delivery.id = outcome.id and delivery.claim_token = outcome.claim_token
      returning outcome.*
    ), logged as (
      -- the lease was still held, so no row of this attempt exists: whatever logs an attempt as
      -- interrupted moves the delivery's claim token in the same statement, under the row's lock
      -- (a takeover, a redelivery, the exhausted-delivery check), and this one just cleared it
      insert into webhook_attempts (id, delivery_id, attempt, started_at, finished_at, status_code, error, duration_ms)
      select claim_token, id, attempt, started_at, now(), status_code, error, duration_ms from applied
    ), superseded as (
      -- the lease was lost: the takeover may have logged this attempt as interrupted; what really happened overwrites it
      insert into webhook_attempts as attempt (id, delivery_id, attempt, started_at, finished_at, status_code, error, duration_ms)
      select claim_token, id, attempt, started_at, now(), status_code, error, duration_ms from outcome
      where not exists (select from applied where applied.claim_token = outcome.claim_token)
      on conflict (delivery_id, id) do update
      set finished_at = excluded.finished_at, status_code = excluded.status_code, error = excluded.error, duration_ms = excluded.duration_ms
    )
    select claim_token from applied
  `.execute(db);
  const applied = new Set(rows.map((row) => row.claim_token));
  return planned.map((entry) => (applied.has(entry.claim.claimToken) ? entry.next : 'superseded'));
};

/** One attempt's outcome (see recordAttemptOutcomes). */
export const recordAttemptOutcome = async (
  db: Kysely<Database>,
  claim: ClaimedDelivery,
  outcome: AttemptOutcome,
  retryDelaysMs: readonly number[],
): Promise<RecordedOutcome> => (await recordAttemptOutcomes(db, [{ claim, outcome }], retryDelaysMs))[0]!;
