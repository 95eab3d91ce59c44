import { hash } from 'node:crypto';
import type { CompiledQuery } from 'kysely';
import type pg from 'pg';

/**
 * Runs compiled queries as named (prepared) statements on a pool of their own. Kysely's driver
 * sends every statement unnamed, so PostgreSQL plans it at every call; a named one is parsed once
 * per connection, and PostgreSQL may keep its plan (a generic one) for the calls that follow. For a
 * statement whose text never changes (its values are all parameters) and whose planning costs
 * more than a little of its run.
 */
export class NamedStatements {
  /** each statement text's name: the same text keeps its name, another text never takes it */
  private readonly names = new Map<string, string>();
  private ended: Promise<void> | null = null;

  constructor(
    private readonly pool: pg.Pool,
    private readonly prefix: string,
  ) {}

  async rows<Row>(query: CompiledQuery<Row>): Promise<Row[]> {
    let name = this.names.get(query.sql);
    if (name === undefined) {
      name = `${this.prefix}-${hash('sha1', query.sql).slice(0, 16)}`;
      this.names.set(query.sql, name);
    }
    const result = await this.pool.query<Row & pg.QueryResultRow>({ name, text: query.sql, values: query.parameters as unknown[] });
    return result.rows;
  }

  /** ends the pool's connections; once, however often it is called */
  end(): Promise<void> {
    this.ended ??= this.pool.end();
    return this.ended;
  }
}
