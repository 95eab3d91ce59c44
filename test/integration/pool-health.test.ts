import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../src/db/pool.js';
import { poolHealth, RECENT_ANSWER_MS } from '../../src/db/pool-health.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

/**
 * /healthz asks every pool whether it answers. Under load a pool's connections are all busy and
 * queries wait for one: a probe in that queue would answer only after them. The health check asks
 * a free connection when there is one; a saturated pool answers from its record (a connection handed
 * back without error lately) instead of queueing, and is probed in its queue only without one.
 */
describe('pool health, asked without queueing', () => {
  let database: TestDatabase;
  let pool: pg.Pool;
  let nowMs = 1_000_000;
  const clock = () => nowMs;

  beforeAll(async () => {
    database = await createTestDatabase('pool_health');
    pool = createPool(database.config, { max: 2, purpose: 'pool-health' });
  });
  afterAll(async () => {
    await pool.end();
    await database.drop();
  });

  it('answers at once while every connection is busy and queries wait, from the connections handed back lately', async () => {
    const health = poolHealth(pool, clock);
    expect(await health.answers()).toBe(true); // a free connection: the probe runs on it
    const held = [await pool.connect(), await pool.connect()];
    const queued = pool.query('select 1 as waited');
    expect(pool.waitingCount).toBe(1);
    try {
      // the connections are still held: a probe in the queue would not return before they are released
      expect(await health.answers()).toBe(true);
      expect(pool.waitingCount).toBe(1);
      // saturated, and no connection handed back for longer than the limit: no evidence, so the probe
      // goes into the queue and answers only once a connection is free
      nowMs += RECENT_ANSWER_MS + 1;
      const probing = health.answers();
      expect(pool.waitingCount).toBe(2);
      held[0]!.release();
      expect(await probing).toBe(true);
      expect((await queued).rows).toEqual([{ waited: 1 }]);
    } finally {
      held[1]!.release();
    }
    // free again: the probe runs
    expect(await health.answers()).toBe(true);
  });

  it('does not answer for a pool whose database is gone, nor for a probe that fails', async () => {
    const unreachable = createPool({ ...database.config, database: 'no_such_database_for_health' }, { max: 1, purpose: 'pool-health' });
    try {
      expect(await poolHealth(unreachable, clock).answers()).toBe(false);
    } finally {
      await unreachable.end();
    }
    expect(await poolHealth(pool, clock).answers('select 1 from no_such_table')).toBe(false);
  });
});
