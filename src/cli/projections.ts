import type { Config } from '../config/env.js';
import { openInfrastructure } from '../infrastructure.js';
import type { Logger } from '../log.js';
import { readCheckpoint, rebuildProjections } from '../projections/checkpoint.js';
import { allProjections } from '../projections/registry.js';
import { progressOnStderr } from './progress.js';
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
 * `ledgergate projections rebuild [name]`: rebuilds each projection from position 0 side by side
 * and swaps it in with one short transaction (see rebuildProjections), whether or not a server is
 * running and serving it. The projections are rebuilt together: one read pass over the store feeds
 * each its own events, and their tables are written side by side, each projection on a session of
 * its own as far as the pool allows (the reads need one more connection), so while one session
 * waits for PostgreSQL the others' batches are decoded and folded. The times printed are from the
 * command's start.
 */
export const rebuildCommand = async (config: Config, logger: Logger, name: string | undefined): Promise<number> => {
  const infrastructure = await openInfrastructure(config, logger, 'cli');
  try {
    const started = Date.now();
    const projections = selectProjections(name);
    const head = await infrastructure.store.headPosition();
    const reached = new Map<string, number>();
    const applied = () => [...reached.values()].reduce((sum, count) => sum + count, 0);
    const progress = progressOnStderr('rebuild');
    await rebuildProjections(infrastructure.db, infrastructure.store, projections, {
      sessions: Math.max(1, config.DATABASE_POOL_SIZE - 1),
      onProgress: (projection, at, events) => {
        reached.set(projection, events);
        progress.update(() => `${applied()} events applied; ${projection} at position ${at} of ${head}`);
      },
      onRebuilt: (projection, position) => process.stdout.write(`${projection}: rebuilt up to position ${position} in ${Date.now() - started} ms\n`),
    });
    progress.done(`done, ${applied()} events applied`);
    process.stdout.write(`${projections.length} projection(s) rebuilt in ${Date.now() - started} ms\n`);
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
