import { Kysely, Migrator, PostgresDialect, sql, type Migration } from 'kysely';
import type pg from 'pg';
import { ADVISORY_LOCK_NAMESPACES } from './advisory-locks.js';

/** A frozen, named set of migrations with its own bookkeeping table. */
export interface MigrationSet {
  /** schema that holds the bookkeeping table */
  schema: string;
  /** the bookkeeping table, `kysely_migration` unless named (two sets in one schema need two) */
  table?: string;
  /**
   * the bookkeeping table these migrations were recorded in before they got a set of their own:
   * their rows move over before migrating, so a database that ran them never runs them again
   */
  movedFrom?: { schema: string; table: string };
  migrations: Record<string, Migration>;
}

const DEFAULT_TABLE = 'kysely_migration';

/** Moves this set's rows out of the table that recorded them before, in one transaction. */
const adoptMovedMigrations = async (db: Kysely<unknown>, set: MigrationSet, table: string) => {
  const from = set.movedFrom;
  if (!from) return;
  const names = Object.keys(set.migrations);
  await db.transaction().execute(async (trx) => {
    // two processes starting at once: one moves the rows, the other then finds them moved
    await sql`select pg_advisory_xact_lock(${ADVISORY_LOCK_NAMESPACES.migrationMoves}, hashtext(${table}))`.execute(trx);
    const old = await sql<{ present: boolean }>`select to_regclass(${`${from.schema}.${from.table}`}) is not null as present`.execute(trx);
    if (!old.rows[0]?.present) return;
    // the shape Kysely's Migrator gives its table, so it finds the table ready
    await sql`create table if not exists ${sql.table(`${set.schema}.${table}`)} (name varchar(255) not null primary key, timestamp varchar(255) not null)`.execute(trx);
    await sql`insert into ${sql.table(`${set.schema}.${table}`)} (name, timestamp)
      select name, timestamp from ${sql.table(`${from.schema}.${from.table}`)} where name = any(${names})
      on conflict (name) do nothing`.execute(trx);
    await sql`delete from ${sql.table(`${from.schema}.${from.table}`)} where name = any(${names})`.execute(trx);
  });
};

export const migrateToLatest = async (pool: pg.Pool, set: MigrationSet): Promise<string[]> => {
  const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: wrapWithoutEnd(pool) }) });
  await db.schema.createSchema(set.schema).ifNotExists().execute();
  const table = set.table ?? DEFAULT_TABLE;
  await adoptMovedMigrations(db, set, table);
  const migrator = new Migrator({
    db,
    migrationTableSchema: set.schema,
    migrationTableName: table,
    migrationLockTableName: `${table}_lock`,
    provider: { getMigrations: async () => set.migrations },
  });
  const { error, results } = await migrator.migrateToLatest();
  await db.destroy();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName);
};

/** Kysely ends the pool it is given when destroyed; the pool here belongs to the caller. */
const wrapWithoutEnd = (pool: pg.Pool) =>
  ({
    connect: () => pool.connect(),
    end: async () => undefined,
  }) as unknown as pg.Pool;
