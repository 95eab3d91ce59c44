import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Every resource under src/api/ is laid out alike: `routes.ts` (createRoute definitions and their
 * zod schemas), `handlers.ts` (typed from the routes; they call the application or the queries),
 * `queries.ts` (the resource's Kysely read-model queries, when it reads the database) and
 * `index.ts` (mounts). Only a `queries.ts` builds a query, so a reader finds every database read
 * of the API in one kind of file.
 */
const API = resolve(import.meta.dirname, '../../src/api');

/** Folders of src/api that are not resources, and why. */
const NOT_RESOURCES: Record<string, string> = {
  middleware: 'what runs before the handlers (authentication, body and rate limits)',
  docs: 'Swagger UI pages and assets: plain Hono routes, not in the API document',
};

/** A Kysely query builder, or raw SQL through Kysely's `sql` tag and helpers. */
const QUERY_BUILDING = /\.(selectFrom|insertInto|replaceInto|updateTable|deleteFrom|mergeInto)\(|\bsql\s*(<[^`;]*>)?\s*`|\bsql\.(raw|ref|lit|id|join|table|val)\(/;

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });

/** `file:line: text` of every line of a source that builds a query. */
const queryLines = (file: string, source: string): string[] =>
  source
    .split('\n')
    .map((line, index) => ({ line, number: index + 1 }))
    .filter(({ line }) => QUERY_BUILDING.test(line))
    .map(({ line, number }) => `src/api/${relative(API, file)}:${number}: ${line.trim()}`);

const resourceFolders = () =>
  readdirSync(API).filter((name) => statSync(join(API, name)).isDirectory() && !(name in NOT_RESOURCES));

describe('the layout of src/api: every resource alike, queries only in queries.ts', () => {
  it('the check sees a query, a raw SQL template and a typed one', () => {
    expect(queryLines('x.ts', "const row = await db.selectFrom('users').selectAll().execute();")).toHaveLength(1);
    expect(queryLines('x.ts', "  .insertInto('users')\n  .deleteFrom('x')")).toHaveLength(2);
    expect(queryLines('x.ts', 'await sql`select 1`.execute(db);')).toHaveLength(1);
    expect(queryLines('x.ts', 'await sql<{ n: number }>`select 1 as n`.execute(db);')).toHaveLength(1);
    expect(queryLines('x.ts', "import type { Kysely } from 'kysely';\nconst sqlState = 1;")).toEqual([]);
  });

  it('finds the resources', () => {
    expect(resourceFolders().length).toBeGreaterThan(10);
  });

  it('no file under src/api but a queries.ts builds a Kysely query', () => {
    const outside = sourceFiles(API)
      .filter((file) => basename(file) !== 'queries.ts')
      .flatMap((file) => queryLines(file, readFileSync(file, 'utf8')));
    expect(outside).toEqual([]);
  });

  it('every resource folder has routes.ts and index.ts', () => {
    const missing = resourceFolders().flatMap((folder) =>
      ['routes.ts', 'index.ts'].filter((file) => !existsSync(join(API, folder, file))).map((file) => `src/api/${folder}/${file}`),
    );
    expect(missing).toEqual([]);
  });

  it('a resource with routes has its handlers in handlers.ts, not in index.ts', () => {
    const inline = resourceFolders().filter((folder) => {
      const indexFile = join(API, folder, 'index.ts');
      const index = existsSync(indexFile) ? readFileSync(indexFile, 'utf8') : '';
      return !existsSync(join(API, folder, 'handlers.ts')) || /RouteHandler|c\.req\.valid\(|c\.json\(/.test(index);
    });
    expect(inline).toEqual([]);
  });
});
