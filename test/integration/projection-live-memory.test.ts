import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseOnClient } from '../../src/db/database.js';
import type { RecordedEvent } from '../../src/eventstore/port.js';
import { applyBatch, projectionSession, readCheckpoint } from '../../src/projections/checkpoint.js';
import { BatchMemory, type Projection } from '../../src/projections/projection.js';
import { ProjectionRunner } from '../../src/projections/runner.js';
import { withdrawalsProjection } from '../../src/projections/withdrawals.js';
import { openRebuildFixture, type RebuildFixture } from '../support/rebuild-fixture.js';

/**
 * A live runner keeps what its batches wrote (BatchMemory) while it stays active: a batch that
 * only moves withdrawals its earlier batches wrote reads nothing back (one round trip, not two),
 * and writes what reading them would have. A batch that fails ends the memory: the runner follows
 * again from its checkpoint with a new one, so nothing of the rolled-back batch is remembered. Its
 * commits do not wait for the WAL flush (a batch a crash loses is applied again, whole).
 */
describe('a live projection runner remembers what its batches wrote', () => {
  let fixture: RebuildFixture;

  beforeAll(async () => {
    fixture = await openRebuildFixture('live_memory', [withdrawalsProjection], { orgIds: ['org_liveA', 'org_liveB'], lifecycles: 6 });
  });
  afterAll(async () => {
    await fixture.close();
  });

  it('moves the withdrawals it wrote without reading them back, and writes what reading them would', async () => {
    const reference = await fixture.reference();
    const { database, db } = await fixture.readModel('live_memory_round_trips');
    const events = await fixture.store.readAll({ filter: withdrawalsProjection.filter, maxCount: 1000 });
    const client = new pg.Client({ ...database.config, pipeline: true });
    await client.connect();
    try {
      let position = await readCheckpoint(databaseOnClient(client), withdrawalsProjection.name);
      const queries: string[] = [];
      const send = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
      (client as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = (...args: unknown[]) => {
        queries.push(typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: string }).text));
        return send(...args);
      };
      const session = projectionSession(client);
      const memory = new BatchMemory();
      const requests = events.filter((event) => event.type === 'WithdrawalRequested');
      const rest = events.filter((event) => event.type !== 'WithdrawalRequested');
      position = await applyBatch(session, withdrawalsProjection, requests, position, memory);
      // what follows the requests, in batches of three: each moves withdrawals an earlier batch wrote
      for (let index = 0; index < rest.length; index += 3) position = await applyBatch(session, withdrawalsProjection, rest.slice(index, index + 3), position, memory);
      expect(queries.filter((query) => /^select .* from "withdrawals"/s.test(query))).toEqual([]);
    } finally {
      await client.end();
    }
    expect(await fixture.snapshot(db)).toEqual(reference);
  });

  it('forgets what a failed batch wrote: following again from the checkpoint gives the same tables', async () => {
    const reference = await fixture.reference();
    const { database, db } = await fixture.readModel('live_memory_failure');
    const memories: (BatchMemory | undefined)[] = [];
    let failed = false;
    // the fourth batch is applied (its states remembered), then fails before its commit, once
    const failingOnce: Projection = {
      ...withdrawalsProjection,
      handleBatch: async (trx, batch: RecordedEvent[], outbox, memory) => {
        memories.push(memory);
        await withdrawalsProjection.handleBatch!(trx, batch, outbox, memory);
        if (memories.length === 4 && !failed) {
          failed = true;
          throw new Error('the batch fails after its handler');
        }
      },
    };
    const runner = new ProjectionRunner({ projection: failingOnce, store: fixture.store, database: database.config, logger: fixture.logger, batchSize: 3, failureDelayMs: () => 10 });
    runner.start();
    try {
      const last = (await fixture.store.readAll({ filter: withdrawalsProjection.filter, maxCount: 1000 })).at(-1)!.position;
      while ((await readCheckpoint(db, withdrawalsProjection.name)) < last) await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      await runner.stop();
    }
    expect(failed).toBe(true);
    // one memory up to the failed batch, a new one from its retry on
    expect(memories[0]).toBeInstanceOf(BatchMemory);
    expect(new Set(memories.slice(0, 4)).size).toBe(1);
    expect(memories[4]).toBeInstanceOf(BatchMemory);
    expect(memories[4]).not.toBe(memories[0]);
    expect(new Set(memories.slice(4)).size).toBe(1);
    expect(await fixture.snapshot(db)).toEqual(reference);
  });

  it('commits its batches without waiting for the WAL flush, where other sessions wait for it', async () => {
    const { database, db } = await fixture.readModel('live_memory_commits');
    // the test server commits without waiting everywhere: this database's sessions wait by default
    await sql`alter database ${sql.id(database.config.database!)} set synchronous_commit = on`.execute(db);
    const settings: string[] = [];
    const noting: Projection = {
      ...withdrawalsProjection,
      handleBatch: async (trx, batch: RecordedEvent[], outbox, memory) => {
        settings.push((await sql<{ synchronous_commit: string }>`show synchronous_commit`.execute(trx)).rows[0]!.synchronous_commit);
        await withdrawalsProjection.handleBatch!(trx, batch, outbox, memory);
      },
    };
    expect(await new ProjectionRunner({ projection: noting, store: fixture.store, database: database.config, logger: fixture.logger }).catchUp()).toBe(true);
    expect(settings.length).toBeGreaterThan(0);
    expect(new Set(settings)).toEqual(new Set(['off']));
    const other = new pg.Client(database.config);
    await other.connect();
    try {
      expect((await other.query<{ synchronous_commit: string }>('show synchronous_commit')).rows[0]!.synchronous_commit).toBe('on');
    } finally {
      await other.end();
    }
  });
});
