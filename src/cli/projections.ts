import type { Config } from '../config/env.js';
import { openInfrastructure } from '../infrastructure.js';
import type { Logger } from '../log.js';
import { readCheckpoint, resetProjection } from '../projections/checkpoint.js';
import { allProjections } from '../projections/registry.js';
import { ProjectionRunner } from '../projections/runner.js';
import type { Projection } from '../projections/projection.js';

const selectProjections = (name: string | undefined): Projection[] => {
  const all = allProjections();
  if (!name) return all;
  const found = all.filter((projection) => projection.name === name);
  if (found.length === 0) {
    throw new Error(`unknown projection "${name}"; known: ${all.map((projection) => projection.name).join(', ') || '(none)'}`);
  }
  return found;
};

/**
 * `ledgergate projections rebuild [name]`: empties the projection's tables and replays from 0.
 * With no server running, this process replays; with one running, the server's active runner
 * hears of the reset and replays, and this command waits until it has caught up.
 */
export const rebuildCommand = async (config: Config, logger: Logger, name: string | undefined): Promise<number> => {
  const infrastructure = await openInfrastructure(config, logger, 'cli');
  try {
    for (const projection of selectProjections(name)) {
      const started = Date.now();
      const head = await infrastructure.store.headPosition();
      await resetProjection(infrastructure.db, projection);
      const runner = new ProjectionRunner({ projection, store: infrastructure.store, database: infrastructure.databaseTarget, logger });
      const replayedHere = await runner.catchUp();
      if (!replayedHere) {
        process.stdout.write(`${projection.name}: the running server is replaying; waiting for position ${head}\n`);
        while ((await readCheckpoint(infrastructure.db, projection.name)) < head) await new Promise((r) => setTimeout(r, 200));
      }
      process.stdout.write(`${projection.name}: rebuilt up to position ${head} in ${Date.now() - started} ms\n`);
    }
    return 0;
  } finally {
    await infrastructure.close();
  }
};

export const statusCommand = async (config: Config, logger: Logger): Promise<number> => {
  const infrastructure = await openInfrastructure(config, logger, 'cli');
  try {
    const head = await infrastructure.store.headPosition();
    const rows = await Promise.all(
      allProjections().map(async (projection) => ({
        projection: projection.name,
        position: (await readCheckpoint(infrastructure.db, projection.name)).toString(),
      })),
    );
    process.stdout.write(JSON.stringify({ headPosition: head.toString(), projections: rows }, null, 2) + '\n');
    return 0;
  } finally {
    await infrastructure.close();
  }
};
