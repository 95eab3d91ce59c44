import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/env.js';
import { connectInfrastructure, type Infrastructure } from '../../src/infrastructure.js';
import { createLogger } from '../../src/log.js';
import { metricsRegistry } from '../../src/observability/metrics.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { newEvent, uniqueCategory } from '../support/events.js';

/** the value of one series of GET /metrics, e.g. `ledgergate_db_pool_waiting{pool="workers"}` */
const metric = async (series: string): Promise<number> => {
  const line = (await metricsRegistry.metrics()).split('\n').find((each) => each.startsWith(`${series} `));
  return Number(line?.slice(series.length + 1));
};

/** the sessions open on `database` whose application name ends with one of this infrastructure's pools */
const sessionsOn = async (database: string): Promise<string[]> => {
  const admin = new pg.Client(inject('postgres'));
  await admin.connect();
  try {
    const { rows } = await admin.query<{ name: string }>(
      `select application_name as name from pg_stat_activity where datname = $1 and application_name like 'ledgergate:%:pools%' order by 1`,
      [database],
    );
    return rows.map((row) => row.name.replace(/^ledgergate:\d+:/, ''));
  } finally {
    await admin.end();
  }
};

const sessionName = async (pool: pg.Pool): Promise<string> => {
  const { rows } = await pool.query<{ name: string }>('select application_name as name from pg_stat_activity where pid = pg_backend_pid()');
  return rows[0]!.name.replace(/^ledgergate:\d+:/, '');
};

describe('database pools per role', () => {
  let database: TestDatabase;
  let infrastructure: Infrastructure;
  let dataDir: string;
  /** sessions of the infrastructure's pools still open when its close() reached onClose */
  let openAtClose: string[] | null = null;

  const connect = async (env: Record<string, string> = {}) => {
    database = await createTestDatabase('pools');
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ledgergate-pools-'));
    const config = loadConfig({ DATA_DIR: dataDir, LEDGERGATE_SECRET_KEY: randomBytes(32).toString('base64'), LOG_LEVEL: 'silent', ...env });
    infrastructure = await connectInfrastructure(database.config, config, createLogger('silent'), 'pools', async () => {
      openAtClose = await sessionsOn(database.config.database!);
      await database.drop();
      await fs.rm(dataDir, { recursive: true, force: true });
    });
  };
  afterEach(async () => {
    await infrastructure.close();
  });

  it('gives the request path, the read side and the workers a pool each, sized by their settings', async () => {
    await connect({ DATABASE_POOL_SIZE: '3', DATABASE_READ_SIDE_POOL_SIZE: '2', DATABASE_WORKERS_POOL_SIZE: '4' });
    const { readSide, workers } = infrastructure.roles;
    expect(new Set([infrastructure.pool, readSide.pool, workers.pool]).size).toBe(3);
    expect([infrastructure.pool.options.max, readSide.pool.options.max, workers.pool.options.max]).toEqual([3, 2, 4]);
    // each role's sessions say whose they are (pg_stat_activity), so an operator can tell them apart
    expect(await sessionName(infrastructure.pool)).toBe('pools');
    expect(await sessionName(readSide.pool)).toBe('pools:read-side');
    expect(await sessionName(workers.pool)).toBe('pools:workers');
  });

  it('a role whose pool is exhausted holds up no other role', async () => {
    await connect({ DATABASE_POOL_SIZE: '2', DATABASE_READ_SIDE_POOL_SIZE: '2', DATABASE_WORKERS_POOL_SIZE: '2' });
    const { readSide, workers } = infrastructure.roles;
    const stream = `${uniqueCategory('pools')}-1`;
    await infrastructure.store.append(stream, 'no_stream', [newEvent('Opened')]);
    const checkedOutBefore = await metric('ledgergate_db_pool_acquisitions_total{pool="workers"}');
    // every workers' connection taken (as background work does under load): a further read of theirs queues
    const held = [await workers.pool.connect(), await workers.pool.connect()];
    try {
      const queued = workers.store.readStream(stream);
      expect(workers.pool.waitingCount).toBe(1);
      // GET /metrics shows it, pool by pool
      expect(await metric('ledgergate_db_pool_waiting{pool="workers"}')).toBe(1);
      expect(await metric('ledgergate_db_pool_connections{pool="workers",state="busy"}')).toBe(2);
      expect(await metric('ledgergate_db_pool_acquisitions_total{pool="workers"}')).toBe(checkedOutBefore + 2);
      expect(await metric('ledgergate_db_pool_waiting{pool="requests"}')).toBe(0);
      // while requests and the read side go on, each on its own connections
      expect(await infrastructure.store.streamRevision(stream)).toBe(0n);
      expect((await readSide.store.readAll({ filter: { categories: [stream.split('-')[0]!] } })).map((event) => event.type)).toEqual(['Opened']);
      held.pop()!.release();
      expect((await queued).map((event) => event.type)).toEqual(['Opened']);
    } finally {
      for (const client of held) client.release();
    }
  });

  it('every role reads what any role appended, and follows it live', async () => {
    await connect();
    const { readSide, workers } = infrastructure.roles;
    const category = uniqueCategory('pools');
    const subscription = readSide.store.subscribeToAll({ filter: { categories: [category] } });
    const batches = subscription[Symbol.asyncIterator]();
    try {
      await workers.store.append(`${category}-1`, 'no_stream', [newEvent('Opened')]);
      expect((await batches.next()).value?.map((event: { type: string }) => event.type)).toEqual(['Opened']);
      expect(await infrastructure.store.streamRevision(`${category}-1`)).toBe(0n);
      expect((await readSide.store.readStream(`${category}-1`)).length).toBe(1);
      // closing a role's view of the store closes nothing: the store and its pools are the infrastructure's
      await workers.store.close();
      await workers.store.append(`${category}-1`, 0n, [newEvent('Touched')]);
      expect(await workers.store.streamRevision(`${category}-1`)).toBe(1n);
    } finally {
      await subscription.close();
    }
  });

  it('health answers while the request pool is saturated, without waiting in its queue', async () => {
    await connect({ DATABASE_POOL_SIZE: '2' });
    await infrastructure.pool.query('select 1');
    const held = [await infrastructure.pool.connect(), await infrastructure.pool.connect()];
    const queued = infrastructure.store.readAll({ maxCount: 1 });
    try {
      // the request pool's connections are held: a check in its queue would wait for their release
      expect(infrastructure.pool.waitingCount).toBe(1);
      expect(await infrastructure.health()).toEqual({ eventStore: true, readModels: true, readSidePool: true, workersPool: true });
    } finally {
      for (const client of held) client.release();
    }
    expect(await queued).toEqual([]);
  });

  it('health reports each pool; close ends every one of them', async () => {
    await connect();
    const { readSide, workers } = infrastructure.roles;
    await Promise.all([infrastructure.pool.query('select 1'), readSide.pool.query('select 1'), workers.pool.query('select 1')]);
    expect(await sessionsOn(database.config.database!)).toEqual(['pools', 'pools:read-side', 'pools:workers']);
    expect(await infrastructure.health()).toEqual({ eventStore: true, readModels: true, readSidePool: true, workersPool: true });
    // a pool that cannot answer is named, the others still answer
    await workers.pool.end();
    expect(await infrastructure.health()).toEqual({ eventStore: true, readModels: true, readSidePool: true, workersPool: false });

    await infrastructure.close();
    expect([infrastructure.pool.ended, readSide.pool.ended, workers.pool.ended]).toEqual([true, true, true]);
    // by the time close() hands over (to drop the database, stop the embedded server) no session of a pool is left
    expect(openAtClose).toEqual([]);
    // the afterEach close() again: a second close is harmless
  });
});
