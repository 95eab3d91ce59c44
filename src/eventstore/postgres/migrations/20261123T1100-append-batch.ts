import { sql, type Kysely } from 'kysely';

/**
 * Group commit: `eventstore.append_batch` writes many independent atomic appends in ONE
 * transaction, so they share one commit (one WAL flush) instead of each waiting for its own under
 * the global append lock. Each item keeps the meaning of `eventstore.append`: all its streams at
 * their expected revisions or nothing of it. Items are decided in order, each on the revisions the
 * items before it in the batch leave, exactly as if they had been appended one after another; an
 * item that fails (wrong expected revision, an event id already stored or used by an earlier item)
 * is answered with its error and writes nothing, the others go on.
 *
 * Order (ARCHITECTURE invariant 6) is kept as in `eventstore.append`: every stream of the batch is
 * locked first (sorted, so concurrent batches cannot deadlock), then the one global advisory lock is
 * taken just before the inserts and held until commit.
 *
 * Frozen once landed: change it with a new migration.
 */
export const up = async (db: Kysely<unknown>): Promise<void> => {
  // p_items: [ [ { "stream", "category", "expected", "events": [{ "id", "type", "data", "metadata" }] }, … ], … ]
  // returns, per item in order: { "position", "streams": [{ "stream", "revision" }] }
  //   or { "error": "wrong_expected_revision", "stream", "expected", "actual" } or { "error": "duplicate_event_id", "eventId" }
  await sql`
    create function eventstore.append_batch(p_items jsonb) returns jsonb
    language plpgsql as $fn$
    declare
      v_revisions jsonb := '{}'::jsonb;
      v_row record;
      v_item jsonb;
      v_append jsonb;
      v_event jsonb;
      v_stream text;
      v_expected text;
      v_current bigint;
      v_failure jsonb;
      v_taken jsonb;
      v_accepted jsonb := '[]'::jsonb;
      v_outcomes jsonb := '[]'::jsonb;
      v_results jsonb := '[]'::jsonb;
      v_streams jsonb;
      v_base bigint;
      v_index int;
    begin
      insert into eventstore.streams (stream_id, category, revision)
        select distinct a.value->>'stream', a.value->>'category', -1
          from jsonb_array_elements(p_items) i, jsonb_array_elements(i.value) a
        on conflict (stream_id) do nothing;
      for v_row in
        select s.stream_id, s.revision from eventstore.streams s
         where s.stream_id in (select a.value->>'stream' from jsonb_array_elements(p_items) i, jsonb_array_elements(i.value) a)
         order by s.stream_id collate "C"
         for update
      loop
        v_revisions := v_revisions || jsonb_build_object(v_row.stream_id, v_row.revision);
      end loop;

      -- event ids already stored, as a set (jsonb object keys)
      select coalesce(jsonb_object_agg(e.event_id::text, true), '{}'::jsonb) into v_taken
        from eventstore.events e
       where e.event_id in (
         select (ev.value->>'id')::uuid
           from jsonb_array_elements(p_items) i, jsonb_array_elements(i.value) a, jsonb_array_elements(a.value->'events') ev);

      for v_item in select value from jsonb_array_elements(p_items) loop
        v_failure := null;
        for v_append in select value from jsonb_array_elements(v_item) loop
          v_stream := v_append->>'stream';
          v_expected := v_append->>'expected';
          v_current := (v_revisions->>v_stream)::bigint;
          if (v_expected = 'no_stream' and v_current <> -1)
            or (v_expected = 'stream_exists' and v_current = -1)
            or (v_expected not in ('any', 'no_stream', 'stream_exists') and v_expected::bigint <> v_current) then
            v_failure := jsonb_build_object('error', 'wrong_expected_revision', 'stream', v_stream, 'expected', v_expected, 'actual', v_current::text);
            exit;
          end if;
          for v_event in select value from jsonb_array_elements(v_append->'events') loop
            if v_taken ? lower(v_event->>'id') then
              v_failure := jsonb_build_object('error', 'duplicate_event_id', 'eventId', v_event->>'id');
              exit;
            end if;
          end loop;
          exit when v_failure is not null;
        end loop;

        if v_failure is null then
          v_streams := '[]'::jsonb;
          for v_append in select value from jsonb_array_elements(v_item) loop
            v_stream := v_append->>'stream';
            v_base := (v_revisions->>v_stream)::bigint;
            v_revisions := jsonb_set(v_revisions, array[v_stream], to_jsonb(v_base + jsonb_array_length(v_append->'events')));
            v_streams := v_streams || jsonb_build_object('stream', v_stream, 'base', v_base);
            for v_event in select value from jsonb_array_elements(v_append->'events') loop
              v_taken := v_taken || jsonb_build_object(lower(v_event->>'id'), true);
            end loop;
          end loop;
          v_accepted := v_accepted || jsonb_build_array(jsonb_build_object('item', v_item, 'streams', v_streams));
          v_outcomes := v_outcomes || jsonb_build_array(jsonb_build_object('accepted', jsonb_array_length(v_accepted) - 1));
        else
          v_outcomes := v_outcomes || jsonb_build_array(v_failure);
        end if;
      end loop;

      if jsonb_array_length(v_accepted) > 0 then
        perform pg_advisory_xact_lock(7370126172797466625); -- 'ledgergate events' : one appender at a time
      end if;

      for v_index in 0 .. jsonb_array_length(v_accepted) - 1 loop
        v_streams := '[]'::jsonb;
        for v_append, v_base in
          select a.value, (b.value->>'base')::bigint
            from jsonb_array_elements(v_accepted->v_index->'item') with ordinality a
            join jsonb_array_elements(v_accepted->v_index->'streams') with ordinality b on b.ordinality = a.ordinality
           order by a.ordinality
        loop
          v_stream := v_append->>'stream';
          insert into eventstore.events (position, stream_id, revision, event_id, category, type, data, metadata)
            select nextval('eventstore.global_position_seq'), v_stream, v_base + e.ordinality,
                   (e.value->>'id')::uuid, v_append->>'category', e.value->>'type', e.value->'data', e.value->'metadata'
              from jsonb_array_elements(v_append->'events') with ordinality as e
             order by e.ordinality;
          v_streams := v_streams || jsonb_build_object('stream', v_stream, 'revision', (v_base + jsonb_array_length(v_append->'events'))::text);
        end loop;
        v_results := v_results || jsonb_build_array(jsonb_build_object('position', currval('eventstore.global_position_seq')::text, 'streams', v_streams));
      end loop;

      update eventstore.streams s
         set revision = (v_revisions->>s.stream_id)::bigint, updated_at = now()
       where s.stream_id in (select jsonb_object_keys(v_revisions))
         and s.revision <> (v_revisions->>s.stream_id)::bigint;
      -- streams only a failed item named: as if the batch had never created them
      delete from eventstore.streams s where s.stream_id in (select jsonb_object_keys(v_revisions)) and s.revision = -1;

      if jsonb_array_length(v_accepted) > 0 then
        perform pg_notify('eventstore_appended', currval('eventstore.global_position_seq')::text);
      end if;
      return (
        select coalesce(jsonb_agg(case when o.value ? 'accepted' then v_results->((o.value->>'accepted')::int) else o.value end order by o.ordinality), '[]'::jsonb)
          from jsonb_array_elements(v_outcomes) with ordinality o
      );
    end
    $fn$`.execute(db);
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await sql`drop function eventstore.append_batch(jsonb)`.execute(db);
};
