import { sql } from 'kysely';
import type { Projection } from '../../src/projections/projection.js';

/**
 * A test projection with two tables: per-stream totals (an upsert, so double application shows as
 * wrong sums) and an applied-events log keyed by position (double application is a PK violation).
 */
export const streamTotalsProjection = (
  category: string,
  options: { failOn?: (index: number) => boolean; tables?: [string, string] } = {},
): Projection & { poisonedIndex: number | null } => {
  const [totals, applied] = options.tables ?? [`${category}_totals`, `${category}_applied`];
  const projection = {
    name: `totals:${category}`,
    filter: { categories: [category] },
    tables: [totals, applied],
    poisonedIndex: null as number | null,
    handle: async (trx: Parameters<Projection['handle']>[0], event: Parameters<Projection['handle']>[1]) => {
      const index = Number(event.data.index);
      if (options.failOn?.(index)) {
        projection.poisonedIndex = index;
        throw new Error(`poisoned event ${index}`);
      }
      const amount = String(event.data.amount ?? '0');
      await sql`insert into ${sql.table(applied)} (position, stream, type) values (${event.position.toString()}, ${event.stream}, ${event.type})`.execute(trx);
      await sql`insert into ${sql.table(totals)} (stream, events, total) values (${event.stream}, 1, ${amount}::numeric)
        on conflict (stream) do update set events = ${sql.table(totals)}.events + 1, total = ${sql.table(totals)}.total + excluded.total`.execute(trx);
    },
  };
  return projection;
};

export const createTotalsTables = async (
  db: { executeQuery: unknown } & Parameters<ReturnType<typeof sql>['execute']>[0],
  [totals, applied]: [string, string],
) => {
  await sql`create table ${sql.table(totals)} (stream text primary key, events integer not null, total numeric(78,0) not null)`.execute(db);
  await sql`create table ${sql.table(applied)} (position bigint primary key, stream text not null, type text not null)`.execute(db);
};

/** md5 of a table's rows in a stable order: equal hashes, identical tables. */
export const tableHash = async (db: Parameters<ReturnType<typeof sql>['execute']>[0], table: string): Promise<string> => {
  const { rows } = await sql<{ hash: string | null }>`select md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as hash from ${sql.table(table)} t`.execute(db);
  return rows[0]?.hash ?? '';
};
