import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { balancesProjection } from '../../src/projections/balances.js';
import { readCheckpoint, rebuildProjection } from '../../src/projections/checkpoint.js';
import type { Projection } from '../../src/projections/projection.js';
import { ProjectionRunner } from '../../src/projections/runner.js';
import { withdrawalsProjection } from '../../src/projections/withdrawals.js';
import { openRebuildFixture, type RebuildFixture } from '../support/rebuild-fixture.js';

const PROJECTIONS = [withdrawalsProjection, balancesProjection];

/**
 * A rebuild builds its tables side by side and swaps them in at the end. These tests race it with
 * the live runner and stop it between its steps: whatever happens, every row and every webhook is
 * there once, as a read model that never saw a rebuild has them.
 */
describe('projection rebuild, side by side', () => {
  let fixture: RebuildFixture;

  const waitForHead = async (db: Kysely<Database>, projection: Projection) => {
    const { store } = fixture;
    const head = await store.headPosition();
    const last = (await store.readAll({ afterPosition: 0n, filter: projection.filter, maxCount: 10_000 })).filter((event) => event.position <= head).at(-1)!.position;
    while ((await readCheckpoint(db, projection.name)) < last) await new Promise((resolve) => setTimeout(resolve, 5));
  };

  beforeAll(async () => {
    fixture = await openRebuildFixture('side_by_side', PROJECTIONS, { orgIds: ['org_sideA', 'org_sideB'], lifecycles: 20 });
  });
  afterAll(async () => {
    await fixture.close();
  });

  it('keeps every row and webhook once while the live runner applies events the rebuild also replays', async () => {
    const { database, db } = await fixture.readModel('side_by_side_live');
    const runners = PROJECTIONS.map((projection) => new ProjectionRunner({ projection, store: fixture.store, database: database.config, logger: fixture.logger, batchSize: 7 }));
    for (const runner of runners) runner.start();
    for (const projection of PROJECTIONS) await waitForHead(db, projection);

    for (const projection of PROJECTIONS) {
      let raced = false;
      await rebuildProjection(db, fixture.store, projection, async () => {
        if (raced) return;
        raced = true;
        // after the rebuild's first batch, before its swap: new events, applied live with their webhooks
        await fixture.appendLifecycles(6);
        await waitForHead(db, projection);
      });
      expect(raced).toBe(true);
    }
    await fixture.appendLifecycles(3);
    for (const projection of PROJECTIONS) await waitForHead(db, projection);
    for (const runner of runners) await runner.stop();

    expect(await fixture.snapshot(db)).toEqual(await fixture.reference());
    expect(await fixture.temporaryTables(db)).toBe(0);
  });

  it('applies the events beyond the checkpoint with their webhooks, once, when no runner is live', async () => {
    const { database, db } = await fixture.readModel('side_by_side_behind');
    for (const projection of PROJECTIONS) await new ProjectionRunner({ projection, store: fixture.store, database: database.config, logger: fixture.logger }).catchUp();
    await fixture.appendLifecycles(5);
    for (const projection of PROJECTIONS) await rebuildProjection(db, fixture.store, projection);

    expect(await fixture.snapshot(db)).toEqual(await fixture.reference());
    for (const projection of PROJECTIONS) {
      const last = (await fixture.store.readAll({ filter: projection.filter, maxCount: 10_000 })).at(-1)!.position;
      expect(await readCheckpoint(db, projection.name)).toBe(last);
    }
  });

  it('changes nothing when it stops between two steps, and a rebuild after it gives the same tables', async () => {
    const { database, db } = await fixture.readModel('side_by_side_stopped');
    for (const projection of PROJECTIONS) await new ProjectionRunner({ projection, store: fixture.store, database: database.config, logger: fixture.logger }).catchUp();
    // events beyond the checkpoint: the swap's transaction also writes their webhooks
    await fixture.appendLifecycles(4);
    const before = await fixture.snapshot(db);
    const checkpoints = await Promise.all(PROJECTIONS.map((projection) => readCheckpoint(db, projection.name)));

    for (const projection of PROJECTIONS) {
      // stopped after its first batch (built side by side, committed), and again inside the swap's transaction
      for (const stopAt of [1, 2]) {
        let calls = 0;
        const stopped = rebuildProjection(db, fixture.store, projection, () => {
          if (++calls === stopAt) throw new Error(`stopped at step ${stopAt}`);
        });
        await expect(stopped).rejects.toThrow(`stopped at step ${stopAt}`);
        expect(await fixture.snapshot(db)).toEqual(before);
        expect(await Promise.all(PROJECTIONS.map((each) => readCheckpoint(db, each.name)))).toEqual(checkpoints);
        expect(await fixture.temporaryTables(db)).toBe(0);
      }
    }

    for (const projection of PROJECTIONS) await rebuildProjection(db, fixture.store, projection);
    expect(await fixture.snapshot(db)).toEqual(await fixture.reference());
  });
});
