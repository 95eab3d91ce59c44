import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../db/database.js';

/** A projection's table, by the schema its live copy is in, and its primary key's columns (null: none). */
export interface ShadowTable {
  schema: string;
  table: string;
  key: string[] | null;
}

const dropShadow = (session: Kysely<Database>, table: string) => sql`drop table if exists ${sql.id('pg_temp', table)}`.execute(session);

/**
 * Drops the copy's indexes that enforce nothing (neither its primary key nor a unique index): no
 * rebuild statement looks a row up by them (the projections find their rows by key, the swap joins
 * on the key), and every row written would otherwise also be written into each of them. The live
 * table keeps all of its own, and its unique indexes are on the copy too, so a row the live table
 * would refuse is refused while the copy is built, as the live projection would refuse it.
 */
const dropLookupIndexes = async (session: Kysely<Database>, table: string): Promise<void> => {
  const { rows } = await sql<{ index: string }>`
    select c.relname as index from pg_index i join pg_class c on c.oid = i.indexrelid
    where i.indrelid = ('pg_temp.' || quote_ident(${table}))::regclass and not i.indisunique and not i.indisprimary
  `.execute(session);
  for (const { index } of rows) await sql`drop index ${sql.id('pg_temp', index)}`.execute(session);
};

/**
 * The memory a session's temporary tables may take (`temp_buffers`, taken as they grow and held
 * until the session ends; only a rebuild's sessions have temporary tables). With the server's
 * default (8 MB) a shadow table larger than that was written out and read back block by block: one
 * rebuild of 156,500 events moved 38,000 local blocks (300 MB) that way.
 */
const SHADOW_TEMP_BUFFERS = '256MB';

/**
 * Sets SHADOW_TEMP_BUFFERS for the session, which PostgreSQL allows only before the session's first
 * temporary table: a session that has had one (it has a temporary schema) keeps the size it had.
 */
const keepShadowsInMemory = async (session: Kysely<Database>): Promise<void> => {
  await sql`select set_config('temp_buffers', ${SHADOW_TEMP_BUFFERS}, false) where pg_my_temp_schema() = 0`.execute(session);
};

/**
 * Creates, on this session only, an empty temporary copy of each table (columns, defaults, keys,
 * constraints and unique indexes: LIKE … INCLUDING ALL, then its other indexes dropped; no
 * triggers). PostgreSQL looks temporary tables up first, so a projection's unqualified statements
 * write these on this session while every other session keeps reading and writing the live ones.
 * They are not WAL-logged, and they vanish with the session whatever happens to the process.
 */
export const createShadowTables = async (session: Kysely<Database>, tables: readonly string[]): Promise<ShadowTable[]> => {
  await keepShadowsInMemory(session);
  const shadows: ShadowTable[] = [];
  for (const table of tables) {
    // a copy left on this pooled session by a rebuild that failed would hide the live table below
    await dropShadow(session, table);
    const { rows } = await sql<{ schema: string; key: string[] | null }>`
      select n.nspname as schema,
             (select array_agg(a.attname::text order by k.ord) from pg_index i cross join unnest(i.indkey) with ordinality as k (attnum, ord)
                join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum
               where i.indrelid = c.oid and i.indisprimary) as key
      from pg_class c join pg_namespace n on n.oid = c.relnamespace where c.oid = quote_ident(${table})::regclass
    `.execute(session);
    const { schema, key } = rows[0]!;
    await sql`create temporary table ${sql.id(table)} (like ${sql.id(schema, table)} including all)`.execute(session);
    await dropLookupIndexes(session, table);
    shadows.push({ schema, table, key });
  }
  return shadows;
};

/**
 * The memory each hash of the swap's anti-joins may take (the transaction's own setting, gone at its
 * commit). With the server's default (4 MB) a table of a few tens of thousands of rows was hashed in
 * batches written to temporary files: on 156,500 events, 11,868 temporary blocks (93 MB) written and
 * read again inside the swap, the short transaction the live runner of the projection waits for.
 */
const SWAP_WORK_MEM = '128MB';

/**
 * `a` and `b` are the same row: byte for byte (`*=`, PostgreSQL's binary row comparison, which
 * tells 1.0 from 1.00 as the rows' text would), looked up by the primary key where the table has
 * one (a hash join on the key, then one comparison per row), else by the rows' text.
 */
const sameRow = (a: string, b: string, key: string[] | null) =>
  key === null
    ? sql`${sql.id(a)}::text = ${sql.id(b)}::text`
    : sql`${sql.join(key.map((column) => sql`${sql.id(a, column)} = ${sql.id(b, column)}`), sql` and `)} and ${sql.id(a)} *= ${sql.id(b)}`;

/**
 * Makes each live table hold exactly its shadow's rows, in the caller's transaction: the live rows
 * no shadow row equals are deleted, then the shadow rows no live row equals are inserted (rows
 * compared whole: sameRow). A rebuild that finds what the live projection wrote changes nothing,
 * so the swap costs two anti-joins, and readers (MVCC) see the old rows until the commit and the
 * new ones from then on. The tables' triggers see each row that changed, as a replay's would.
 * The anti-joins' hashes get SWAP_WORK_MEM for this transaction only.
 */
export const swapInShadowTables = async (trx: Transaction<Database>, shadows: readonly ShadowTable[]): Promise<void> => {
  await sql`set local work_mem = ${sql.lit(SWAP_WORK_MEM)}`.execute(trx);
  for (const { schema, table, key } of shadows) {
    const live = sql.id(schema, table);
    const shadow = sql.id('pg_temp', table);
    // aliases named after the table: pg_stat_statements (PostgreSQL 18) tells statements apart by
    // their relations' aliases, so with one alias for all, the swaps of every table with a key of
    // the same shape were counted as one statement
    const [liveAlias, shadowAlias] = [`live_${table}`, `shadow_${table}`];
    await sql`delete from ${live} as ${sql.id(liveAlias)} where not exists (select from ${shadow} as ${sql.id(shadowAlias)} where ${sameRow(shadowAlias, liveAlias, key)})`.execute(trx);
    await sql`insert into ${live} select * from ${shadow} as ${sql.id(shadowAlias)} where not exists (select from ${live} as ${sql.id(liveAlias)} where ${sameRow(liveAlias, shadowAlias, key)})`.execute(trx);
  }
};

export const dropShadowTables = async (session: Kysely<Database>, shadows: readonly ShadowTable[]): Promise<void> => {
  for (const { table } of shadows) await dropShadow(session, table);
};
