import { sql } from 'kysely';

/**
 * A new UUID of version 7, made by PostgreSQL (17 has no uuidv7()): the milliseconds since the
 * epoch in its first 48 bits, the version, then 74 random bits (4 from random(), 70 from
 * gen_random_uuid(), whose variant bits are kept). Evaluated once per row. Keys made in time order go into an index's latest pages,
 * where random ones land anywhere in it: a table written and rewritten at a high rate (the webhook
 * outbox) touches a few index pages per batch instead of one per row, and writes far fewer full
 * page images to the WAL after each checkpoint.
 */
export const timeOrderedUuid = sql<string>`encode(overlay(uuid_send(gen_random_uuid()) placing substring(int8send((floor(extract(epoch from clock_timestamp()) * 1000)::bigint << 8) | (112 + floor(random() * 16)::integer)) from 2) from 1 for 7), 'hex')::uuid`;
