import { sql, type Kysely } from 'kysely';

/**
 * `eventstore.append_batch`, set-based: the same meaning as 20261123T1100-append-batch (many
 * independent atomic appends in one transaction, decided in order, each answered on its own), with
 * its work done in a fixed number of statements whatever the size of the batch: one insert of every
 * event, one update of the stream heads, the revision and event id checks as one query.
 *
 * The batch arrives as typed arrays, one element per append or per event, so nothing but the events'
 * data and metadata is JSON (two jsonb arrays, one element per event):
 *   p_items[a]         which item (0-based, in batch order) append a belongs to; appends are in item order
 *   p_streams[a], p_categories[a], p_expected[a] ('any' | 'no_stream' | 'stream_exists' | '<revision>'),
 *   p_event_counts[a]  how many events append a has
 *   p_event_appends[e] which append (1-based) event e belongs to; events are in append order
 *   p_event_ids[e], p_types[e], p_data->e, p_metadata->e (0-based)
 * It returns, per item in order, { "position", "streams": [{ "stream", "revision" }] }, or
 * { "error": "wrong_expected_revision", "stream", "expected", "actual" }, or
 * { "error": "duplicate_event_id", "eventId" } (the item writes nothing; the others go on).
 *
 * Deciding in order, set-based: an append's base revision is its stream's head plus the events of the
 * appends before it in the batch that are still candidates (a running sum per stream). The first item
 * found wrong on those bases is wrong for good (every item before it is accepted, so its bases are
 * exact); it is set aside and the query runs again for the items after it, whose bases no longer
 * count its events. A batch with no refusal is decided by one query; each refusal costs one more.
 *
 * Order (ARCHITECTURE invariant 6) is kept as before: every stream of the batch is locked first
 * (sorted, so concurrent batches cannot deadlock), the one global advisory lock is taken just
 * before the insert and held until commit, and positions are drawn in batch order.
 *
 * The jsonb form of 20261124T0900 stays beside this one (a process of the previous version still
 * calls it during a rolling upgrade). Frozen once landed: change it with a new migration.
 */
export const up = async (db: Kysely<unknown>): Promise<void> => {
  await sql`
    create function eventstore.append_batch(
      p_items int[], p_streams text[], p_categories text[], p_expected text[], p_event_counts int[],
      p_event_appends int[], p_event_ids uuid[], p_types text[], p_data jsonb, p_metadata jsonb
    ) returns jsonb
    language plpgsql as $fn$
    declare
      v_stream_ids text[];
      v_heads bigint[];
      v_wanted int;
      v_refused int[] := '{}';
      v_refusals jsonb := '{}'::jsonb;
      v_refusal record;
      v_results jsonb;
      v_last bigint;
      v_inserted bigint;
      v_expected_inserts bigint;
    begin
      if cardinality(p_items) is distinct from cardinality(p_streams)
        or cardinality(p_items) is distinct from cardinality(p_categories)
        or cardinality(p_items) is distinct from cardinality(p_expected)
        or cardinality(p_items) is distinct from cardinality(p_event_counts)
        or cardinality(p_event_appends) is distinct from cardinality(p_event_ids)
        or cardinality(p_event_appends) is distinct from cardinality(p_types)
        or cardinality(p_event_appends) is distinct from jsonb_array_length(p_data)
        or cardinality(p_event_appends) is distinct from jsonb_array_length(p_metadata) then
        raise exception 'append_batch: the arrays of one batch differ in length' using errcode = '22023';
      end if;

      -- every stream of the batch, created at -1 if new, then locked in sorted order (concurrent
      -- batches cannot deadlock), with its latest committed head
      insert into eventstore.streams (stream_id, category, revision)
        select distinct on (a.stream collate "C") a.stream, a.category, -1
          from unnest(p_streams, p_categories) as a(stream, category)
         order by a.stream collate "C"
        on conflict (stream_id) do nothing;
      select coalesce(array_agg(l.stream_id), '{}'), coalesce(array_agg(l.revision), '{}'), (select count(distinct a) from unnest(p_streams) a)
        into v_stream_ids, v_heads, v_wanted
        from (select s.stream_id, s.revision from eventstore.streams s
               where s.stream_id = any(p_streams)
               order by s.stream_id collate "C"
               for update) l;
      if cardinality(v_stream_ids) <> v_wanted then
        raise exception 'append_batch: % of % streams could not be locked', v_wanted - cardinality(v_stream_ids), v_wanted;
      end if;

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
        v_refusals := v_refusals || jsonb_build_object(v_refusal.item::text, v_refusal.refusal);
      end loop;

      if cardinality(v_refused) < p_items[cardinality(p_items)] + 1 then -- items are numbered 0, 1, … in order
        perform pg_advisory_xact_lock(7370126172797466625); -- 'ledgergate events' : one appender at a time
      end if;

      with accepted as (
        select a.ord, a.item, a.stream, a.category, a.n,
               h.head + coalesce(sum(a.n) over (partition by a.stream order by a.ord rows between unbounded preceding and 1 preceding), 0) as base
          from unnest(p_items, p_streams, p_categories, p_event_counts) with ordinality as a(item, stream, category, n, ord)
          join unnest(v_stream_ids, v_heads) as h(stream, head) on h.stream = a.stream
         where a.item <> all(v_refused)
      ), batch_event as (
        select e.ord, e.append_ord, e.id, e.type, row_number() over (partition by e.append_ord order by e.ord) as number
          from unnest(p_event_appends, p_event_ids, p_types) with ordinality as e(append_ord, id, type, ord)
      ), inserted as (
        insert into eventstore.events (position, stream_id, revision, event_id, category, type, data, metadata)
        select nextval('eventstore.global_position_seq'), a.stream, a.base + e.number, e.id, a.category, e.type,
               p_data -> (e.ord::int - 1), p_metadata -> (e.ord::int - 1)
          from batch_event e join accepted a on a.ord = e.append_ord
         order by e.ord
        returning position, event_id
      ), heads as ( -- a data-modifying WITH runs to completion whether or not it is read
        update eventstore.streams s
           set revision = h.revision, updated_at = now()
          from (select a.stream, max(a.base + a.n) as revision from accepted a group by a.stream) h
         where s.stream_id = any(v_stream_ids) and s.stream_id = h.stream
        returning s.stream_id
      ), item_position as (
        select a.item, max(i.position) as position
          from inserted i join batch_event e on e.id = i.event_id join accepted a on a.ord = e.append_ord
         group by a.item
      ), item_streams as (
        select a.item, jsonb_agg(jsonb_build_object('stream', a.stream, 'revision', (a.base + a.n)::text) order by a.ord) as streams
          from accepted a
         group by a.item
      )
      select coalesce(jsonb_agg(coalesce(v_refusals -> i.item::text,
                                         jsonb_build_object('position', p.position::text, 'streams', s.streams)) order by i.item), '[]'::jsonb),
             max(p.position), (select count(*) from inserted), (select sum(a.n) from accepted a)
        into v_results, v_last, v_inserted, v_expected_inserts
        from (select distinct item from unnest(p_items) item) i
        left join item_position p on p.item = i.item
        left join item_streams s on s.item = i.item;

      if v_inserted is distinct from coalesce(v_expected_inserts, 0) then
        raise exception 'append_batch: % events inserted where the appends count %', v_inserted, v_expected_inserts using errcode = '22023';
      end if;
      if cardinality(v_refused) > 0 then
        -- streams only a refused item named: as if the batch had never created them
        delete from eventstore.streams s where s.stream_id = any(v_stream_ids) and s.revision = -1;
      end if;
      if v_last is not null then
        perform pg_notify('eventstore_appended', v_last::text);
      end if;
      return v_results;
    end
    $fn$`.execute(db);
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await sql`drop function eventstore.append_batch(int[], text[], text[], text[], int[], int[], uuid[], text[], jsonb, jsonb)`.execute(db);
};
