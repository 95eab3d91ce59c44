import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { auditStreamsProjection } from '../../src/projections/audit-streams.js';
import { balancesProjection } from '../../src/projections/balances.js';
import { readCheckpoint, rebuildProjections } from '../../src/projections/checkpoint.js';
import { applyEvents, type Projection } from '../../src/projections/projection.js';
import { ProjectionRunner } from '../../src/projections/runner.js';
import { withdrawalsProjection } from '../../src/projections/withdrawals.js';
import { openRebuildFixture, type RebuildFixture } from '../support/rebuild-fixture.js';

const PROJECTIONS = [withdrawalsProjection, balancesProjection, auditStreamsProjection];

/**
 * Several projections rebuilt together: one read pass feeds each its own events (two of them share
 * a session here). Raced with the live runners and stopped between steps, every projection ends
 * with every row and webhook once, and gets exactly its events, in order, once.
 */
describe('projection rebuild, one read pass for several projections', () => {
  let fixture: RebuildFixture;

  const positionsOf = async (projection: Projection, upTo: bigint) =>
    (await fixture.store.readAll({ filter: projection.filter, maxCount: 10_000 })).map((event) => event.position).filter((position) => position <= upTo);

  const waitForHeads = async (db: Kysely<Database>) => {
    const head = await fixture.store.headPosition();
    for (const projection of PROJECTIONS) {
      const last = (await positionsOf(projection, head)).at(-1)!;
      while ((await readCheckpoint(db, projection.name)) < last) await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };

  /** the projection as the rebuild runs it, noting the position of every event it applies */
  const recording = (projection: Projection, applied: bigint[], before: () => Promise<void> = async () => undefined): Projection => ({
    ...projection,
    handleBatch: async (trx, events, outbox) => {
      await before();
      applied.push(...events.map((event) => event.position));
      return applyEvents(trx, projection, events, outbox);
    },
  });

  const liveRunners = (database: { config: import('pg').ClientConfig }) =>
    PROJECTIONS.map((projection) => new ProjectionRunner({ projection, store: fixture.store, database: database.config, logger: fixture.logger, batchSize: 7 }));

  beforeAll(async () => {
    fixture = await openRebuildFixture('shared_pass', PROJECTIONS, { orgIds: ['org_passA', 'org_passB'], lifecycles: 20 });
  });
  afterAll(async () => {
    await fixture.close();
  });

  it('gives each projection exactly its events in order, once, while the live runners apply events the pass also reads', async () => {
    const { database, db } = await fixture.readModel('shared_pass_live');
    const runners = liveRunners(database);
    for (const runner of runners) runner.start();
    await waitForHeads(db);

    const applied = PROJECTIONS.map((): bigint[] => []);
    let raced = false;
    const positions = await rebuildProjections(
      db,
      fixture.store,
      PROJECTIONS.map((projection, index) => recording(projection, applied[index]!)),
      {
        sessions: 2,
        onProgress: async () => {
          if (raced) return;
          raced = true;
          // after the pass's first batch, before any swap: new events, applied live with their webhooks
          await fixture.appendLifecycles(6);
          await waitForHeads(db);
        },
      },
    );
    expect(raced).toBe(true);
    for (const [index, projection] of PROJECTIONS.entries()) {
      expect(applied[index]).toEqual(await positionsOf(projection, positions.get(projection.name)!));
    }

    await fixture.appendLifecycles(3);
    await waitForHeads(db);
    for (const runner of runners) await runner.stop();
    expect(await fixture.snapshot(db)).toEqual(await fixture.reference());
    expect(await fixture.temporaryTables(db)).toBe(0);
  });

  it('changes nothing when it stops between two steps, and a rebuild after it gives the same tables', async () => {
    const { database, db } = await fixture.readModel('shared_pass_stopped');
    for (const projection of PROJECTIONS) await new ProjectionRunner({ projection, store: fixture.store, database: database.config, logger: fixture.logger }).catchUp();
    // events beyond the checkpoints: a swap's transaction also writes their webhooks
    await fixture.appendLifecycles(4);
    const before = await fixture.snapshot(db);
    const checkpoints = await Promise.all(PROJECTIONS.map((projection) => readCheckpoint(db, projection.name)));

    // stopped after the pass's first batch, then after its second (another session's)
    for (const stopAt of [1, 2]) {
      let calls = 0;
      const stopped = rebuildProjections(db, fixture.store, PROJECTIONS, {
        sessions: 2,
        onProgress: () => {
          if (++calls === stopAt) throw new Error(`stopped at step ${stopAt}`);
        },
      });
      await expect(stopped).rejects.toThrow(`stopped at step ${stopAt}`);
      expect(await fixture.snapshot(db)).toEqual(before);
      expect(await Promise.all(PROJECTIONS.map((each) => readCheckpoint(db, each.name)))).toEqual(checkpoints);
      expect(await fixture.temporaryTables(db)).toBe(0);
    }

    await rebuildProjections(db, fixture.store, PROJECTIONS, { sessions: 2 });
    expect(await fixture.snapshot(db)).toEqual(await fixture.reference());
    expect(await fixture.temporaryTables(db)).toBe(0);
  });

  it('lets a session run ahead of one that lags behind, and the lagging one still gets exactly its events, also those appended while it lags', async () => {
    const { database, db } = await fixture.readModel('shared_pass_lagging');
    const runners = liveRunners(database);
    for (const runner of runners) runner.start();
    await waitForHeads(db);

    const applied = PROJECTIONS.map((): bigint[] => []);
    // withdrawals and audit-streams share the first session, balances has the second (sessions: 2)
    let ahead = 0;
    let onAhead: () => void = () => undefined;
    const aheadBy = (batches: number) => new Promise<void>((resolve) => (onAhead = () => ahead >= batches && resolve()));
    let lagged = false;
    const [withdrawals, balances, auditStreams] = [
      recording(withdrawalsProjection, applied[0]!),
      recording(balancesProjection, applied[1]!, async () => {
        if (lagged) return;
        lagged = true;
        // balances holds its first batch until the other session has applied three more of the pass
        // (in step with it, the other session could never get there), and new events come meanwhile
        await aheadBy(4);
        await fixture.appendLifecycles(6);
        await waitForHeads(db);
      }),
      // every event here is of an exported category: audit-streams has a share of every batch of the pass
      recording(auditStreamsProjection, applied[2]!, async () => {
        ahead++;
        onAhead();
      }),
    ];
    const positions = await rebuildProjections(db, fixture.store, [withdrawals, balances, auditStreams], { sessions: 2, batchSize: 7 });
    expect(lagged).toBe(true);
    expect(ahead).toBeGreaterThanOrEqual(4);
    for (const [index, projection] of PROJECTIONS.entries()) {
      expect(applied[index]).toEqual(await positionsOf(projection, positions.get(projection.name)!));
    }

    await fixture.appendLifecycles(2);
    await waitForHeads(db);
    for (const runner of runners) await runner.stop();
    expect(await fixture.snapshot(db)).toEqual(await fixture.reference());
    expect(await fixture.temporaryTables(db)).toBe(0);
  });

  it('stops every session when one fails while the others run ahead, and changes nothing', async () => {
    const { database, db } = await fixture.readModel('shared_pass_lane_failed');
    for (const projection of PROJECTIONS) await new ProjectionRunner({ projection, store: fixture.store, database: database.config, logger: fixture.logger }).catchUp();
    const before = await fixture.snapshot(db);
    const checkpoints = await Promise.all(PROJECTIONS.map((projection) => readCheckpoint(db, projection.name)));
    let failedAt = 0;
    const failing: Projection = {
      ...balancesProjection,
      handleBatch: async (trx, events, outbox) => {
        if (++failedAt === 2) throw new Error('balances failed at its second batch');
        return applyEvents(trx, balancesProjection, events, outbox);
      },
    };
    const stopped = rebuildProjections(db, fixture.store, [withdrawalsProjection, failing, auditStreamsProjection], { sessions: 2, batchSize: 7 });
    await expect(stopped).rejects.toThrow('balances failed at its second batch');
    expect(failedAt).toBe(2);
    expect(await fixture.snapshot(db)).toEqual(before);
    expect(await Promise.all(PROJECTIONS.map((each) => readCheckpoint(db, each.name)))).toEqual(checkpoints);
    expect(await fixture.temporaryTables(db)).toBe(0);
  });
});
