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
  const recording = (projection: Projection, applied: bigint[]): Projection => ({
    ...projection,
    handleBatch: (trx, events, outbox) => {
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
});
