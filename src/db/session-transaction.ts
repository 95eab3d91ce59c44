import { CompiledQuery, Kysely, PostgresDialect, type DatabaseConnection, type Driver, type QueryExecutorProvider, type QueryResult, type Transaction } from 'kysely';
import type pg from 'pg';

/**
 * A transaction on one session (a pipelining client of its own, `pipeline: true`) in as few round
 * trips and socket writes as its reads allow: its BEGIN travels with its first statement
 * (`opening`), held back until the work's first read (or the closing) and written to the socket
 * together with it; the work's writes (`sessionWrite`) wait and go out together with its last
 * statement (`closing`) and COMMIT, without waiting for the opening's answer either. A transaction
 * whose work writes only costs one round trip and one write to the socket, one whose work reads
 * once two of each, however many it writes. The closing must therefore check on the server
 * whatever the commit depends on (raising an error refuses it). `opening` and `closing` are each
 * one query string of several statements (PostgreSQL runs them in order and skips the rest after
 * an error), plain SQL with their values inlined (such a string takes no parameters): callers pass
 * only literals made safe by `client.escapeLiteral` or numbers they made themselves.
 */
export interface SessionTransaction<DB, Result> {
  /** runs right after BEGIN, in the same round trip (its answer is read only when something failed: an error in it fails the transaction) */
  opening: string;
  /**
   * The statements between, on a Kysely transaction bound to the session. It starts before the
   * opening was sent (its first statement goes out right behind it, in the same write, and runs
   * after it on the server); it must settle all it started before it ends.
   */
  work: (trx: Transaction<DB>) => Promise<Result>;
  /** runs right before COMMIT, in the same round trip; an error it raises refuses the commit */
  closing: string;
}

const AFFECTING_COMMANDS = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE']);

/** A statement a write sends: a query builder, or raw SQL compiled against the transaction. */
export interface WriteStatement {
  compile(executorProvider: QueryExecutorProvider): CompiledQuery;
}

/** the writes a session transaction holds back, by its Kysely transaction */
const heldWrites = new WeakMap<Transaction<unknown>, CompiledQuery[]>();

/**
 * A write whose answer nobody reads. In a session transaction it is held back and sent (in its
 * order) with the next statement the transaction sends, at the latest with its COMMIT, so a batch of
 * writes costs no round trip of its own; its failure fails the transaction then. Anywhere else it
 * runs now. Statements keep their order either way: a read sends the writes held before it first.
 */
export const sessionWrite = async <DB>(trx: Transaction<DB>, statement: WriteStatement): Promise<void> => {
  const compiled = statement.compile(trx);
  const held = heldWrites.get(trx as Transaction<unknown>);
  if (held) held.push(compiled);
  else await trx.executeQuery(compiled);
};

/**
 * Runs `send`, whose queries go to the socket in one write: the pipelining client submits a query
 * as it is made, each a write of its own (a system call, and a wake-up of the server's process)
 * unless the socket is corked meanwhile.
 */
const inOneWrite = <Result>(client: pg.Client, send: () => Result): Result => {
  const { stream } = (client as unknown as { connection: { stream: { cork(): void; uncork(): void } } }).connection;
  stream.cork();
  try {
    return send();
  } finally {
    stream.uncork();
  }
};

/**
 * The statements with parameters a session has prepared, by their text, and the names they have
 * there: a projection's writes are the same few texts batch after batch (their rows travel as
 * arrays), so each is parsed once per session and then only bound and run, without being parsed,
 * analysed and planned again at every batch. At most PREPARED_PER_SESSION texts a session; any
 * other goes unnamed, as before (a text with its values inlined would otherwise fill the session).
 */
const preparedNames = new WeakMap<pg.Client, Map<string, string>>();
const PREPARED_PER_SESSION = 64;

/** `statement` on the session: by its prepared name when it has parameters (see preparedNames) */
const sendStatement = (client: pg.Client, statement: CompiledQuery): Promise<pg.QueryResult> => {
  const values = [...statement.parameters];
  if (values.length === 0) return client.query(statement.sql, values);
  let names = preparedNames.get(client);
  if (!names) preparedNames.set(client, (names = new Map()));
  let name = names.get(statement.sql);
  if (name === undefined && names.size < PREPARED_PER_SESSION) {
    name = `session_${names.size + 1}`;
    names.set(statement.sql, name);
  }
  return name === undefined ? client.query(statement.sql, values) : client.query({ name, text: statement.sql, values });
};

/**
 * Sends the held statements then the query, pipelined in one write (each awaited only together):
 * the query's result, or the first failure among them all (the server runs nothing after it in the
 * transaction; a failed opening, held first, is the one thrown).
 */
const sendAfterHeld = async <Result>(client: pg.Client, held: CompiledQuery[], send: () => Promise<Result>): Promise<Result> => {
  const sent = inOneWrite(client, () => [...held.splice(0).map((statement) => sendStatement(client, statement)), send()]);
  const settled = await Promise.allSettled(sent);
  const failed = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  return (settled.at(-1) as PromiseFulfilledResult<Result>).value;
};

/** One session as Kysely's connection: each query a query on it (after the writes held), with its rows and affected count. */
const sessionConnection = (client: pg.Client, held: CompiledQuery[]): DatabaseConnection => ({
  executeQuery: async <Row>(compiled: CompiledQuery): Promise<QueryResult<Row>> => {
    const result = await sendAfterHeld(client, held, () => sendStatement(client, compiled));
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
 * first and last statements): only the rollback is this driver's, and it drops the writes held.
 */
class CallerEndsDriver implements Driver {
  private readonly connection: DatabaseConnection;
  constructor(
    private readonly client: pg.Client,
    private readonly held: CompiledQuery[],
  ) {
    this.connection = sessionConnection(client, held);
  }
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    return this.connection;
  }
  async beginTransaction(): Promise<void> {}
  async commitTransaction(): Promise<void> {}
  async rollbackTransaction(): Promise<void> {
    this.held.length = 0;
    await this.client.query('rollback');
  }
  async releaseConnection(): Promise<void> {}
  async destroy(): Promise<void> {}
}

class CallerEndsDialect extends PostgresDialect {
  constructor(
    private readonly client: pg.Client,
    private readonly held: CompiledQuery[],
  ) {
    super({ pool: {} as pg.Pool });
  }
  override createDriver(): Driver {
    return new CallerEndsDriver(this.client, this.held);
  }
}

/**
 * Runs `transaction` on `client` (a session of its own, not a pool's): everything commits together
 * or nothing does. A failure anywhere (the opening, the work, a held write, the closing, the commit)
 * rolls back, once everything the work started has settled; the opening's failure is the one
 * thrown when it failed (what follows it fails only because it did).
 */
export const sessionTransaction = <DB>(client: pg.Client) => {
  const held: CompiledQuery[] = [];
  const db = new Kysely<DB>({ dialect: new CallerEndsDialect(client, held) });
  return async <Result>({ opening, work, closing }: SessionTransaction<DB, Result>): Promise<Result> => {
    return db.transaction().execute(async (trx) => {
      // BEGIN and the opening go out with the work's first statement, or with the closing (a plain
      // string without parameters: PostgreSQL runs its several statements in order)
      held.push(CompiledQuery.raw(`begin; ${opening}`));
      heldWrites.set(trx as Transaction<unknown>, held);
      try {
        const result = await work(trx);
        const ended = (await sendAfterHeld(client, held, () => client.query(`${closing}; commit`))) as unknown as pg.QueryResult[];
        // a COMMIT of a transaction an error aborted answers ROLLBACK, not an error
        const command = ended.at(-1)?.command;
        if (command !== 'COMMIT') throw new Error(`session transaction ended with ${command}, not COMMIT`);
        return result;
      } finally {
        heldWrites.delete(trx as Transaction<unknown>);
      }
    });
  };
};
