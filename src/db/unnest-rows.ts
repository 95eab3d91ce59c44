import { sql, type RawBuilder } from 'kysely';
import type { Database } from './database.js';

/** A column of rows sent as one array parameter: the rows' key (the column's name) and its PostgreSQL type. */
export type UnnestColumn<Row> = readonly [name: keyof Row & string, type: string];

/**
 * `unnest($1::type[], $2::type[], …) as alias (name, …)`: rows as a table, with one array parameter
 * per column however many rows there are (a multi-row VALUES takes one parameter per cell, each
 * compiled, prepared and sent on its own).
 */
export const unnestRows = <Row>(rows: readonly Row[], columns: readonly UnnestColumn<Row>[], alias: string): RawBuilder<unknown> =>
  sql`unnest(${sql.join(columns.map(([name, type]) => sql`${rows.map((row) => row[name])}::${sql.raw(type)}[]`))}) as ${sql.id(alias)} (${sql.join(columns.map(([name]) => sql.id(name)))})`;

/**
 * `insert into table (columns) select … from unnest(…)`: rows inserted with one parameter per column (an `on conflict` may follow).
 * `Tables`: the tables `table` is one of (the read model's, unless a worker's own are named).
 */
export const insertRows = <Row, Tables = Database>(table: keyof Tables & string, rows: readonly Row[], columns: readonly UnnestColumn<Row>[]): RawBuilder<unknown> =>
  sql`insert into ${sql.id(table)} (${sql.join(columns.map(([name]) => sql.id(name)))}) select * from ${unnestRows(rows, columns, 'row')}`;

/**
 * `jsonb_to_recordset($1::jsonb) as alias (name type, …)`: rows as a table from ONE parameter, the
 * rows as one JSON array, each value what JSON.stringify makes of it (a Date its ISO text, an object
 * a JSON document for a jsonb column). Where a column holds JSON documents this is cheaper than
 * unnestRows: the documents go out inside the array once, instead of each stringified on its own
 * and then escaped again into the text of an array parameter.
 */
export const jsonRows = <Row>(rows: readonly Row[], columns: readonly UnnestColumn<Row>[], alias: string): RawBuilder<unknown> =>
  sql`jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as ${sql.id(alias)} (${sql.join(columns.map(([name, type]) => sql`${sql.id(name)} ${sql.raw(type)}`))})`;
