import { sql, type Kysely } from 'kysely';

/**
 * The PostgreSQL event store. Frozen once landed: change it with a new migration.
 *
 * Global order (ARCHITECTURE invariant 6): `eventstore.append` locks the target stream rows
 * (sorted, so concurrent multi-stream appends cannot deadlock), checks expected revisions, and only
 * then takes one transaction-scoped advisory lock, held just for the events insert and the commit.
 * Positions are therefore committed in increasing order: once a reader sees position p, every
 * position below p is committed or will never exist, so reading `position > checkpoint` never skips.
 */
export const up = async (db: Kysely<unknown>): Promise<void> => {
  await sql`create schema if not exists eventstore`.execute(db);
  await sql`
    create table eventstore.streams (
      stream_id text not null,
      category text not null,
      revision bigint not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint streams_pkey primary key (stream_id)
    )`.execute(db);
  await sql`create sequence eventstore.global_position_seq as bigint minvalue 1 no cycle`.execute(db);
  await sql`
    create table eventstore.events (
      position bigint not null,
      stream_id text not null,
      revision bigint not null,
      event_id uuid not null,
      category text not null,
      type text not null,
      data jsonb not null,
      metadata jsonb not null,
      recorded_at timestamptz not null default now(),
      constraint events_pkey primary key (position),
      constraint events_stream_revision_key unique (stream_id, revision),
      constraint events_event_id_key unique (event_id)
    )`.execute(db);
  await sql`create index events_category_position_idx on eventstore.events (category, position)`.execute(db);
  await sql`create index events_type_position_idx on eventstore.events (type, position)`.execute(db);

  // p_appends: [{ "stream", "category", "expected": "any"|"no_stream"|"stream_exists"|"<revision>",
  //              "events": [{ "id", "type", "data", "metadata" }] }]
  // returns { "position": "<last position>", "streams": [{ "stream", "revision" }] } in the given order
  await sql`
    create function eventstore.append(p_appends jsonb) returns jsonb
    language plpgsql as $fn$
    declare
      v_append jsonb;
      v_event jsonb;
      v_stream text;
      v_expected text;
      v_current bigint;
      v_revisions jsonb := '{}'::jsonb;
      v_result jsonb := '[]'::jsonb;
      v_position bigint;
    begin
      for v_append in
        select value from jsonb_array_elements(p_appends) order by value->>'stream' collate "C"
      loop
        v_stream := v_append->>'stream';
        v_expected := v_append->>'expected';
        insert into eventstore.streams (stream_id, category, revision)
          values (v_stream, v_append->>'category', -1)
          on conflict (stream_id) do nothing;
        select revision into v_current from eventstore.streams where stream_id = v_stream for update;
        if (v_expected = 'no_stream' and v_current <> -1)
          or (v_expected = 'stream_exists' and v_current = -1)
          or (v_expected not in ('any', 'no_stream', 'stream_exists') and v_expected::bigint <> v_current) then
          raise exception using
            errcode = 'LG001',
            message = 'wrong expected revision',
            detail = jsonb_build_object('stream', v_stream, 'expected', v_expected, 'actual', v_current::text)::text;
        end if;
        update eventstore.streams
          set revision = v_current + jsonb_array_length(v_append->'events'), updated_at = now()
          where stream_id = v_stream;
        v_revisions := v_revisions || jsonb_build_object(v_stream, v_current);
      end loop;

      perform pg_advisory_xact_lock(7370126172797466625); -- 'ledgergate events' : one appender at a time

      for v_append in select value from jsonb_array_elements(p_appends) loop
        v_stream := v_append->>'stream';
        v_current := (v_revisions->>v_stream)::bigint;
        insert into eventstore.events (position, stream_id, revision, event_id, category, type, data, metadata)
          select nextval('eventstore.global_position_seq'), v_stream, v_current + e.ordinality,
                 (e.value->>'id')::uuid, v_append->>'category', e.value->>'type', e.value->'data', e.value->'metadata'
            from jsonb_array_elements(v_append->'events') with ordinality as e;
        v_result := v_result || jsonb_build_object(
          'stream', v_stream,
          'revision', (v_current + jsonb_array_length(v_append->'events'))::text);
      end loop;

      v_position := currval('eventstore.global_position_seq');
      perform pg_notify('eventstore_appended', v_position::text);
      return jsonb_build_object('position', v_position::text, 'streams', v_result);
    end
    $fn$`.execute(db);
};

export const down = async (db: Kysely<unknown>): Promise<void> => {
  await sql`drop schema eventstore cascade`.execute(db);
};
