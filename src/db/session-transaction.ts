import { CompiledQuery, Kysely, PostgresDialect, type DatabaseConnection, type Driver, type QueryResult, type Transaction } from 'kysely';
import type pg from 'pg';

/**
 * A transaction on one session in two round trips fewer than `begin`, first statement, …, last
 * statement, `commit`: its BEGIN travels with its first statement, and its COMMIT with its last,
 * each pair as one query string (PostgreSQL runs a string's statements in order and skips the
 * rest after an error). The two statements are plain SQL with their values inlined (a query string
 * of several statements takes no parameters): callers pass only literals made safe by
 * `client.escapeLiteral` or numbers they made themselves.
 */
export interface SessionTransaction<DB, Result> {
  /** runs right after BEGIN, in the same round trip; `work` gets its rows */
  opening: string;
  /** the statements between, on a Kysely transaction bound to the session */
  work: (trx: Transaction<DB>, opened: readonly Record<string, unknown>[]) => Promise<Result>;
  /** runs right before COMMIT, in the same round trip */
  closing: string;
}

const AFFECTING_COMMANDS = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE']);

/** One session as Kysely's connection: each query a query on it, with its rows and affected count. */
const sessionConnection = (client: pg.Client): DatabaseConnection => ({
  executeQuery: async <Row>(compiled: CompiledQuery): Promise<QueryResult<Row>> => {
    const result = await client.query(compiled.sql, [...compiled.parameters]);
    return {
      rows: (result.rows ?? []) as Row[],
      ...(AFFECTING_COMMANDS.has(result.command) && result.rowCount !== null ? { numAffectedRows: BigInt(result.rowCount) } : {}),
    };
  },
  streamQuery: () => {
    throw new Error('streaming is not supported inside a session transaction');
  },
});

/**
 * Kysely's transaction bookkeeping over a session whose BEGIN and COMMIT the caller sends (with its
 * first and last statements): only the rollback is this driver's.
 */
class CallerEndsDriver implements Driver {
  private readonly connection: DatabaseConnection;
  constructor(private readonly client: pg.Client) {
    this.connection = sessionConnection(client);
  }
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    return this.connection;
  }
  async beginTransaction(): Promise<void> {}
  async commitTransaction(): Promise<void> {}
  async rollbackTransaction(): Promise<void> {
    await this.client.query('rollback');
  }
  async releaseConnection(): Promise<void> {}
  async destroy(): Promise<void> {}
}

class CallerEndsDialect extends PostgresDialect {
  constructor(private readonly client: pg.Client) {
    super({ pool: {} as pg.Pool });
  }
  override createDriver(): Driver {
    return new CallerEndsDriver(this.client);
  }
}

/**
 * Runs `transaction` on `client` (a session of its own, not a pool's): everything commits together
 * or nothing does. A failure anywhere (the opening, the work, the closing, the commit) rolls back.
 */
export const sessionTransaction = <DB>(client: pg.Client) => {
  const db = new Kysely<DB>({ dialect: new CallerEndsDialect(client) });
  return async <Result>({ opening, work, closing }: SessionTransaction<DB, Result>): Promise<Result> => {
    let opened: pg.QueryResult[];
    try {
      opened = (await client.query(`begin; ${opening}`)) as unknown as pg.QueryResult[];
    } catch (error) {
      // BEGIN may have run before the opening failed: the session must not stay in that transaction
      await client.query('rollback').catch(() => undefined);
      throw error;
    }
    return db.transaction().execute(async (trx) => {
      const result = await work(trx, opened[1]?.rows ?? []);
      await client.query(`${closing}; commit`);
      return result;
    });
  };
};
