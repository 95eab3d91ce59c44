import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/database.js';
import { timeOrderedUuid } from '../../src/db/time-ordered-uuid.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

describe('time-ordered UUIDs made by PostgreSQL', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase('time_ordered_uuid');
  });
  afterAll(async () => {
    await database.drop();
  });

  it('are version 7 UUIDs, one per row, each different, starting with the milliseconds they were made at', async () => {
    const db = createDatabase(database.pool);
    const before = Date.now();
    const { rows } = await sql<{ id: string }>`select ${timeOrderedUuid}::text as id from generate_series(1, 10000)`.execute(db);
    const after = Date.now();
    expect(new Set(rows.map((row) => row.id)).size).toBe(10_000);
    for (const { id } of rows) {
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      const milliseconds = Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16);
      // the database's clock and this process's are the same machine's: a second of slack for either
      expect(milliseconds).toBeGreaterThanOrEqual(before - 1_000);
      expect(milliseconds).toBeLessThanOrEqual(after + 1_000);
    }
  });
});
