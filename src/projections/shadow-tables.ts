import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
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
 * The memory each hash of the swap's joins may take (the transaction's own setting, gone at its
 * commit). With the server's default (4 MB) a table of a few tens of thousands of rows was hashed in
 * batches written to temporary files: on 156,500 events, 11,868 temporary blocks (93 MB) written and
 * read again inside the swap, the short transaction the live runner of the projection waits for.
 */
const SWAP_WORK_MEM = '128MB';

/**
 * A swap's tables and their aliases, named after the table: pg_stat_statements (PostgreSQL 18)
 * tells statements apart by their relations' aliases, so with one alias for all, the swaps of
 * every table with a key of the same shape were counted as one statement.
 */
interface SwapNames {
  table: string;
  live: RawBuilder<unknown>;
  shadow: RawBuilder<unknown>;
  liveAlias: string;
  shadowAlias: string;
}

const swapNames = ({ schema, table }: ShadowTable): SwapNames => ({
  table,
  live: sql.id(schema, table),
  shadow: sql.id('pg_temp', table),
  liveAlias: `live_${table}`,
  shadowAlias: `shadow_${table}`,
});

/**
 * Makes an unkeyed live table hold its shadow's rows by two anti-joins on the rows' text: the live
 * rows no shadow row equals are deleted, then the shadow rows no live row equals are inserted.
 */
const swapUnkeyed = async (trx: Transaction<Database>, { live, shadow, liveAlias, shadowAlias }: SwapNames): Promise<void> => {
  const sameText = (a: string, b: string) => sql`${sql.id(a)}::text = ${sql.id(b)}::text`;
  await sql`delete from ${live} as ${sql.id(liveAlias)} where not exists (select from ${shadow} as ${sql.id(shadowAlias)} where ${sameText(shadowAlias, liveAlias)})`.execute(trx);
  await sql`insert into ${live} select * from ${shadow} as ${sql.id(shadowAlias)} where not exists (select from ${live} as ${sql.id(liveAlias)} where ${sameText(liveAlias, shadowAlias)})`.execute(trx);
};

/**
 * Makes a keyed live table hold exactly its shadow's rows in ONE pass over the two: a full join on
 * the key writes the keys of the rows that differ (a live row with no shadow row equal to it:
 * `gone`; a shadow row with no live row equal to it: `added`; a row changed is both) to a
 * temporary table dropped at the commit, then the live rows gone are deleted and the shadow rows
 * added are inserted, each found by its key. Two anti-joins did the same, each hashing one of the
 * tables whole (on 75,261 withdrawals: two anti-joins 0.8-1.1 s each, the full join 0.5 s).
 */
const swapKeyed = async (trx: Transaction<Database>, { table, live, shadow, liveAlias, shadowAlias }: SwapNames, key: string[]): Promise<void> => {
  const differences = sql.id(`swap_differences_${table}`);
  const keyOf = (alias: string) => sql.join(key.map((column) => sql.id(alias, column)));
  const side = (name: 'gone' | 'added') => key.map((column) => sql.id(`${name}_${column}`));
  const sideOf = (alias: string, name: 'gone' | 'added') => sql.join(key.map((column) => sql`${sql.id(alias, column)} as ${sql.id(`${name}_${column}`)}`));
  // a key column is never null, so a null one is the side the full join did not find
  const missing = (alias: string) => sql`${sql.id(alias, key[0]!)} is null`;
  await sql`
    create temporary table ${differences} on commit drop as
    select ${sideOf(liveAlias, 'gone')}, ${sideOf(shadowAlias, 'added')}
    from ${live} as ${sql.id(liveAlias)} full join ${shadow} as ${sql.id(shadowAlias)} on ${sql.join(
      key.map((column) => sql`${sql.id(shadowAlias, column)} = ${sql.id(liveAlias, column)}`),
      sql` and `,
    )}
    where ${missing(liveAlias)} or ${missing(shadowAlias)} or not (${sql.id(shadowAlias)} *= ${sql.id(liveAlias)})
  `.execute(trx);
  const [gone, added] = [side('gone'), side('added')];
  await sql`delete from ${live} as ${sql.id(liveAlias)} where (${keyOf(liveAlias)}) in (select ${sql.join(gone)} from ${differences} where ${gone[0]!} is not null)`.execute(trx);
  await sql`insert into ${live} select * from ${shadow} as ${sql.id(shadowAlias)} where (${keyOf(shadowAlias)}) in (select ${sql.join(added)} from ${differences} where ${added[0]!} is not null)`.execute(trx);
};

/**
 * Makes each live table hold exactly its shadow's rows, in the caller's transaction: the live rows
 * no shadow row equals are deleted, then the shadow rows no live row equals are inserted (rows
 * compared whole: where the table has a primary key, found by it and then compared byte for byte
 * with `*=`, PostgreSQL's binary row comparison, which tells 1.0 from 1.00 as the rows' text would
 * (swapKeyed); else by the rows' text (swapUnkeyed)). A rebuild that finds what the live projection wrote changes nothing,
 * and readers (MVCC) see the old rows until the commit and the new ones from then on. The tables'
 * triggers see each row that changed, as a replay's would. The hashes get SWAP_WORK_MEM for this
 * transaction only.
 */
export const swapInShadowTables = async (trx: Transaction<Database>, shadows: readonly ShadowTable[]): Promise<void> => {
  await sql`set local work_mem = ${sql.lit(SWAP_WORK_MEM)}`.execute(trx);
  for (const shadow of shadows) {
    if (shadow.key !== null) await swapKeyed(trx, swapNames(shadow), shadow.key);
    else await swapUnkeyed(trx, swapNames(shadow));
  }
};

export const dropShadowTables = async (session: Kysely<Database>, shadows: readonly ShadowTable[]): Promise<void> => {
  for (const { table } of shadows) await dropShadow(session, table);
};
