import { sql, type Kysely } from 'kysely';
import * as appendBatchChecksAsAt1200 from './20261127T1900-append-batch-checks-as-at-1200.js';

/**
 * `eventstore.append_batch_checks` (20261127T1200, put back by 20261127T1900) again, the same
 * arguments, answer and meaning, at a cost linear in the batch's streams. Its heads update named
 * each stream twice, `s.stream_id = h.stream` and `s.stream_id = any(v_stream_ids)`: both went into
 * the index condition of the probe made for each written stream, and a search with an array key
 * prepares (sorts) its whole array again at each probe: a batch of n streams sorted n arrays of n
 * (a probe took 71 µs among 520 streams, 96 µs among 1,304; 11 µs by the name alone). Each
 * stream is now probed by its own name alone (one stream estimated per probe, so the plan stays a
 * nested loop over the primary key). The check that the events match their appends' counts
 * aggregates the appends' ordinals in order, without a second sort key whose ties held equal values.
 *
 * Replaced in place (`create or replace`): a process of the previous version calls the same
 * function with the same meaning during a rolling upgrade. Frozen once landed: change it with a
 * new migration.
 */
export const up = async (db: Kysely<unknown>): Promise<void> => {
  await sql`
    create or replace function eventstore.append_batch_checks(
      p_items int[], p_streams text[], p_categories text[], p_expected text[], p_event_counts int[],
      p_event_appends int[], p_event_ids uuid[], p_types text[], p_data jsonb, p_metadata jsonb,
      out positions bigint[], out revisions bigint[], out refusals jsonb
    )
    language plpgsql
    -- its statements' plans are made once per session: planned again at each call (the planner's
    -- default for some of them), the first statement cost more to plan than to run
    set plan_cache_mode = force_generic_plan
    as $fn$
    declare
      v_stream_ids text[];
      v_heads bigint[];
      v_decide_each boolean;
      v_events_match boolean;
      v_no_stream_checks boolean;
      v_offsets bigint[];
      v_refused int[] := '{}';
      v_refusal record;
      v_expected_inserts bigint;
    begin
      refusals := '{}'::jsonb;
      if cardinality(p_items) is distinct from cardinality(p_streams)
        or cardinality(p_items) is distinct from cardinality(p_categories)
        or cardinality(p_items) is distinct from cardinality(p_expected)
        or cardinality(p_items) is distinct from cardinality(p_event_counts)
        or cardinality(p_event_appends) is distinct from cardinality(p_event_ids)
        or cardinality(p_event_appends) is distinct from cardinality(p_types)
        or cardinality(p_event_appends) is distinct from jsonb_array_length(p_data)
        or cardinality(p_event_appends) is distinct from jsonb_array_length(p_metadata) then
        raise exception 'append_batch_checks: the arrays of one batch differ in length' using errcode = '22023';
      end if;

      -- every stream of the batch created at -1 if new, locked in sorted order, with its latest head;
      -- and whether the batch needs deciding item by item
      with locked as (
        insert into eventstore.streams as s (stream_id, category, revision)
        select distinct on (a.stream collate "C") a.stream, a.category, -1
          from unnest(p_streams, p_categories) as a(stream, category)
         order by a.stream collate "C"
        on conflict (stream_id) do update set revision = s.revision -- locks the row, keeps its head
        returning s.stream_id, s.revision
      )
      select h.ids, h.heads,
             -- a stream written by one append and named by another (writing or checking it)
             exists (select from unnest(p_streams, p_event_counts) as a(stream, n)
                      group by a.stream having count(*) > 1 and bool_or(a.n > 0))
               or exists (select from unnest(p_streams, p_expected) as a(stream, expected)
                            join locked l on l.stream_id = a.stream
                           where case a.expected
                                   when 'any' then false
                                   when 'no_stream' then l.revision <> -1
                                   when 'stream_exists' then l.revision = -1
                                   else a.expected::bigint <> l.revision end)
               -- counted, not exists(): an exists() of a generic plan walked the table, expecting an early hit;
               -- = any(array) is answered from the unique index
               or (select count(*) from eventstore.events e where e.event_id = any(p_event_ids)) > 0
               or (select count(distinct i) from unnest(p_event_ids) as i) < cardinality(p_event_ids),
             (select coalesce(array_agg(a.ord order by a.ord), '{}')
                from unnest(p_event_counts) with ordinality as a(n, ord), generate_series(1, a.n) as g(n)) = p_event_appends::bigint[],
             -- an item that checks a stream at no_stream: the one case whose lock may create a row to remove
             exists (select from unnest(p_expected, p_event_counts) as a(expected, n) where a.n = 0 and a.expected = 'no_stream')
        into v_stream_ids, v_heads, v_decide_each, v_events_match, v_no_stream_checks
        from (select coalesce(array_agg(l.stream_id), '{}') as ids, coalesce(array_agg(l.revision), '{}') as heads from locked l) h;
      if not v_events_match then
        raise exception 'append_batch_checks: the events of the batch do not match its appends'' event counts' using errcode = '22023';
      end if;

      if v_decide_each then
        loop
          with candidate as (
            select a.ord, a.item, a.stream, a.expected,
                   h.head + coalesce(sum(a.n) over (partition by a.stream order by a.ord rows between unbounded preceding and 1 preceding), 0) as base
              from unnest(p_items, p_streams, p_expected, p_event_counts) with ordinality as a(item, stream, expected, n, ord)
              join unnest(v_stream_ids, v_heads) as h(stream, head) on h.stream = a.stream
             where a.item <> all(v_refused)
          ), stored as ( -- = any(array): answered from the unique index, whatever the plan
            select s.event_id from eventstore.events s where s.event_id = any(p_event_ids)
          ), reused as (
            select e.append_ord, (array_agg(e.id order by e.ord))[1] as event_id
              from (select e.append_ord, e.id, e.ord,
                           min(e.append_ord) over (partition by e.id) < e.append_ord or s.event_id is not null as taken
                      from unnest(p_event_appends, p_event_ids) with ordinality as e(append_ord, id, ord)
                      left join stored s on s.event_id = e.id
                     where p_items[e.append_ord] <> all(v_refused)) e
             where e.taken
             group by e.append_ord
          )
          select c.item,
                 case when r.event_id is null or w.wrong then
                        jsonb_build_object('error', 'wrong_expected_revision', 'stream', c.stream, 'expected', c.expected, 'actual', c.base::text)
                      else jsonb_build_object('error', 'duplicate_event_id', 'eventId', r.event_id::text) end as refusal
            into v_refusal
            from candidate c
            left join reused r on r.append_ord = c.ord
            cross join lateral (select case c.expected
                                         when 'any' then false
                                         when 'no_stream' then c.base <> -1
                                         when 'stream_exists' then c.base = -1
                                         else c.expected::bigint <> c.base end as wrong) w
           where w.wrong or r.event_id is not null
           order by c.ord
           limit 1;
          exit when not found;
          v_refused := v_refused || v_refusal.item;
          refusals := refusals || jsonb_build_object(v_refusal.item::text, v_refusal.refusal);
        end loop;
        -- each append's base: its stream's head plus the events of the accepted appends before it on that stream
        select array_agg(o.offset_events order by o.ord), sum(o.n) filter (where o.item <> all(v_refused))
          into v_offsets, v_expected_inserts
          from (select a.ord, a.item, a.n,
                       coalesce(sum(case when a.item = any(v_refused) then 0 else a.n end)
                                  over (partition by a.stream order by a.ord rows between unbounded preceding and 1 preceding), 0) as offset_events
                  from unnest(p_items, p_streams, p_event_counts) with ordinality as a(item, stream, n, ord)) o;
      else
        v_offsets := array_fill(0, array[cardinality(p_streams)]);
        v_expected_inserts := cardinality(p_event_ids);
      end if;

      if coalesce(v_expected_inserts, 0) > 0 then
        perform pg_advisory_xact_lock(7370126172797466625); -- 'ledgergate events' : one appender at a time
      end if;

      with accepted as (
        select a.ord, a.stream, a.category, a.n, h.head + a.offset_events as base
          from unnest(p_items, p_streams, p_categories, p_event_counts, v_offsets) with ordinality as a(item, stream, category, n, offset_events, ord)
          join unnest(v_stream_ids, v_heads) as h(stream, head) on h.stream = a.stream
         where a.item <> all(v_refused)
      ), inserted as (
        insert into eventstore.events (position, stream_id, revision, event_id, category, type, data, metadata)
        select nextval('eventstore.global_position_seq'), a.stream, a.base + e.number, e.id, a.category, e.type,
               p_data -> (e.ord::int - 1), p_metadata -> (e.ord::int - 1)
          from (select e.*, row_number() over (partition by e.append_ord order by e.ord) as number
                  from unnest(p_event_appends, p_event_ids, p_types) with ordinality as e(append_ord, id, type, ord)) e
          join accepted a on a.ord = e.append_ord
         order by e.ord
        returning position, stream_id, revision
      ), heads as ( -- a data-modifying WITH runs to completion whether or not it is read
        update eventstore.streams s
           set revision = h.revision, updated_at = now()
          from (select a.stream, max(a.base + a.n) as revision from accepted a group by a.stream having sum(a.n) > 0) h
         where s.stream_id = h.stream
      )
      select coalesce(array_agg(i.position order by i.position), '{}'), coalesce(array_agg(i.revision order by i.position), '{}')
        into positions, revisions
        from inserted i;

      if cardinality(positions) is distinct from coalesce(v_expected_inserts, 0) then
        raise exception 'append_batch_checks: % events inserted where the appends count %', cardinality(positions), v_expected_inserts using errcode = '22023';
      end if;
      if cardinality(v_refused) > 0 then
        -- streams only a refused item named: as if the batch had never created them
        delete from eventstore.streams s where s.stream_id = any(v_stream_ids) and s.revision = -1;
      elsif v_no_stream_checks then
        -- a stream created only to be locked for a no_stream check
        delete from eventstore.streams s
         where s.revision = -1
           and s.stream_id = any(array(select a.stream from unnest(p_streams, p_expected, p_event_counts) as a(stream, expected, n)
                                        where a.n = 0 and a.expected = 'no_stream'));
      end if;
      if cardinality(positions) > 0 then
        perform pg_notify('eventstore_appended', positions[cardinality(positions)]::text);
      end if;
    end
    $fn$`.execute(db);
};

export const down = (db: Kysely<unknown>): Promise<void> => appendBatchChecksAsAt1200.up(db);
