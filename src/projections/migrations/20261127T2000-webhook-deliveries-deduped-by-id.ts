import { sql, type Kysely } from 'kysely';

/**
 * The outbox turns a replayed delivery away by its id instead of a unique index on `dedupe_key`. A
 * delivery's id is derived from its dedupe key and its event's time (outbox.ts, deliveryIdOf), and
 * an event's time is part of the event, so a replay or rebuild of the same source event writes the
 * same id, which the primary key already turns away. `webhook_deliveries_dedupe_key_key` was the
 * outbox's widest index (text keys `org:type:eventId`, in no useful order) and every delivery
 * enqueued and every outcome recorded (no heap-only update: it moves `status`) wrote an entry into
 * it. One index entry fewer per delivery enqueued, delivered or retried.
 *
 * Deliveries enqueued before ids were derived carry random ids: in an outbox that holds any, a
 * replay of their events would get new ids, and only the dedupe key's index stops it, so there it
 * stays (enqueueing turns a delivery away on either index).
 */
export const up = async (db: Kysely<unknown>): Promise<void> => {
  await sql`
    do $$
    begin
      if not exists (
        select 1 from (
          select id, encode(sha256(convert_to('webhook-delivery:' || dedupe_key, 'UTF8')), 'hex') as digest,
                 lpad(to_hex(round(extract(epoch from event_timestamp) * 1000)::bigint), 12, '0') as milliseconds
          from webhook_deliveries
        ) as delivery
        -- deliveryIdOf in SQL: the event's milliseconds, version 7, the digest's bits, variant 10
        where id <> (milliseconds || '7' || substr(digest, 14, 3)
                     || to_hex((('x' || substr(digest, 17, 1))::bit(4)::integer & 3) | 8) || substr(digest, 18, 15))::uuid
      ) then
        alter table webhook_deliveries drop constraint webhook_deliveries_dedupe_key_key;
      end if;
    end
    $$
  `.execute(db);
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await sql`
    do $$
    begin
      if not exists (select 1 from pg_constraint where conname = 'webhook_deliveries_dedupe_key_key') then
        alter table webhook_deliveries add constraint webhook_deliveries_dedupe_key_key unique (dedupe_key);
      end if;
    end
    $$
  `.execute(db);
};
