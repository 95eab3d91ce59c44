import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/database.js';
import { createShadowTables, dropShadowTables, swapInShadowTables } from '../../src/projections/shadow-tables.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * The swap makes a live table hold exactly its shadow's rows, comparing rows whole: with a primary
 * key, by the key and then byte for byte; without one, by the rows' text. A row found as it was is
 * not written; a row that differs only in how a value is written (2.0 and 2.00) is replaced.
 */
describe('shadow tables: the swap', () => {
  let database: TestDatabase;
  let db: Kysely<Database>;

  beforeAll(async () => {
    database = await createTestDatabase('shadow_tables');
    db = createDatabase(database.pool);
    await sql`create table swap_keyed (id text primary key, amount numeric not null, note text)`.execute(db);
    await sql`create table swap_unkeyed (id text not null, amount numeric not null, note text)`.execute(db);
    await sql`create table swap_indexed (id text primary key, address text not null, note text)`.execute(db);
    await sql`create unique index swap_indexed_address_idx on swap_indexed (address)`.execute(db);
    await sql`create index swap_indexed_note_idx on swap_indexed (note)`.execute(db);
  });
  afterAll(async () => {
    await database.drop();
  });

  const rows = async (table: string) =>
    (await sql<{ row: string; xmin: string }>`select t::text as row, t.xmin::text as xmin from ${sql.table(table)} t order by t::text`.execute(db)).rows;

  for (const table of ['swap_keyed', 'swap_unkeyed']) {
    it(`makes ${table} equal to its shadow and writes only the rows that differ`, async () => {
      await sql`insert into ${sql.table(table)} values ('same', 1, null), ('rewritten', 2.0, 'b'), ('changed', 3, 'c'), ('gone', 4, 'd')`.execute(db);
      const before = new Map((await rows(table)).map(({ row, xmin }) => [row, xmin]));

      await db.connection().execute(async (session) => {
        const shadows = await createShadowTables(session, [table]);
        // unqualified: the session's temporary copy
        await sql`insert into ${sql.table(table)} values ('same', 1, null), ('rewritten', 2.00, 'b'), ('changed', 3, 'C'), ('new', 5, null)`.execute(session);
        await session.transaction().execute((trx) => swapInShadowTables(trx, shadows));
        await dropShadowTables(session, shadows);
      });

      const after = await rows(table);
      expect(after.map(({ row }) => row)).toEqual(['(changed,3,C)', '(new,5,)', '(rewritten,2.00,b)', '(same,1,)']);
      // the row found as it was keeps its version; the others are new versions
      expect(after.find(({ row }) => row === '(same,1,)')!.xmin).toBe(before.get('(same,1,)'));
      expect(after.find(({ row }) => row === '(rewritten,2.00,b)')!.xmin).not.toBe(before.get('(rewritten,2.0,b)'));
    });
  }

  it("gives the swap's hashes more memory for its own transaction only", async () => {
    await db.connection().execute(async (session) => {
      const workMem = async () => (await sql<{ work_mem: string }>`show work_mem`.execute(session)).rows[0]!.work_mem;
      const before = await workMem();
      const shadows = await createShadowTables(session, ['swap_keyed']);
      const during = await session.transaction().execute(async (trx) => {
        await swapInShadowTables(trx, shadows);
        return (await sql<{ work_mem: string }>`show work_mem`.execute(trx)).rows[0]!.work_mem;
      });
      await dropShadowTables(session, shadows);
      expect(during).toBe('128MB');
      expect(during).not.toBe(before);
      // the pooled session goes back to the server's setting at the commit
      expect(await workMem()).toBe(before);
    });
  });

  it("keeps a session's shadow tables in memory when it has had none yet, and still creates them on a session that has", async () => {
    await db.connection().execute(async (session) => {
      const tempBuffers = async () => (await sql<{ temp_buffers: string }>`show temp_buffers`.execute(session)).rows[0]!.temp_buffers;
      const first = await createShadowTables(session, ['swap_keyed']);
      expect(await tempBuffers()).toBe('256MB');
      await dropShadowTables(session, first);
      // the session has had a temporary table: PostgreSQL refuses a new size now, so none is asked for
      await expect(sql`set temp_buffers = '16MB'`.execute(session)).rejects.toThrow(/temp_buffers/);
      const again = await createShadowTables(session, ['swap_keyed']);
      expect(await tempBuffers()).toBe('256MB');
      await sql`insert into swap_keyed values ('x', 1, null)`.execute(session);
      await dropShadowTables(session, again);
    });
  });

  it('copies the primary key and the unique indexes, which refuse what the live table would, and no other index', async () => {
    // each index as its kind and its column
    const indexesOf = async (session: Kysely<Database>, schema: string) =>
      (
        await sql<{ index: string }>`
          select (case when i.indisunique then 'unique ' else '' end) || pg_get_indexdef(i.indexrelid, 1, true) as index from pg_index i
          where i.indrelid = (${schema} || '.swap_indexed')::regclass order by 1`.execute(session)
      ).rows.map((row) => row.index);
    expect(await indexesOf(db, 'public')).toEqual(['note', 'unique address', 'unique id']);
    await db.connection().execute(async (session) => {
      const shadows = await createShadowTables(session, ['swap_indexed']);
      expect(await indexesOf(session, 'pg_temp')).toEqual(['unique address', 'unique id']);
      await sql`insert into swap_indexed values ('a', 'addr-1', null)`.execute(session);
      await expect(sql`insert into swap_indexed values ('b', 'addr-1', null)`.execute(session)).rejects.toThrow(/duplicate key value violates unique constraint/);
      await expect(sql`insert into swap_indexed values ('a', 'addr-2', null)`.execute(session)).rejects.toThrow(/duplicate key value violates unique constraint/);
      await dropShadowTables(session, shadows);
    });
  });
});
