import { Kysely, Migrator, PostgresDialect, type Migration } from 'kysely';
import type pg from 'pg';

/** A frozen, named set of migrations with its own bookkeeping table. */
export interface MigrationSet {
  /** schema that holds the bookkeeping table (`kysely_migration`) */
  schema: string;
  migrations: Record<string, Migration>;
}

export const migrateToLatest = async (pool: pg.Pool, set: MigrationSet): Promise<string[]> => {
  const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: wrapWithoutEnd(pool) }) });
  await db.schema.createSchema(set.schema).ifNotExists().execute();
  const migrator = new Migrator({
    db,
    migrationTableSchema: set.schema,
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
