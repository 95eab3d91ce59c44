import { createApiClient } from './api.js';
import type { Lifecycle } from './lifecycle.js';
import { bootstrapWithOwnReceiver, fundOrganization, listTokens } from './organization.js';
import { startBenchService, type BenchService } from './service.js';
import { num } from './table.js';
import { untilWorkersStarted, WORKER_STARTS_WAITED_FOR, type WorkerStarts } from './worker-starts.js';

export interface StartFigures {
  /** from the spawn to /healthz 200 */
  healthyMs: number;
  /** from the spawn to /readyz 200: every projection caught up with what the store held at start */
  readyMs: number;
  /** from the spawn until every chain's deposit watcher and withdrawal processor had ended its first pass */
  workersStartedMs: number;
  workers: WorkerStarts;
}

/** a long history takes a while to catch up on at the first start */
export const CATCH_UP_TIMEOUT_MS = 60 * 60_000;

/** waits for `service`'s chain workers to end their first pass; when that was, from its spawn */
export const workersStarted = async (service: BenchService, apiKey: string, signal: AbortSignal): Promise<Pick<StartFigures, 'workersStartedMs' | 'workers'>> => {
  const workers = await untilWorkersStarted(createApiClient(service.url, apiKey), CATCH_UP_TIMEOUT_MS, signal, service.workersUrl);
  return { workersStartedMs: service.sinceSpawnMs(), workers };
};

/** a start of `service`: ready, then its chain workers through their first pass (times from its spawn) */
export const untilStarted = async (service: BenchService, apiKey: string, signal: AbortSignal): Promise<StartFigures> => {
  const readyMs = await service.untilReady(CATCH_UP_TIMEOUT_MS);
  return { healthyMs: service.healthyAfterMs, readyMs, ...(await workersStarted(service, apiKey, signal)) };
};

export const describeStart = (start: StartFigures) =>
  `healthy ${num(start.healthyMs / 1000, 1)} s, ready ${num(start.readyMs / 1000, 1)} s, ${num(start.workers.workers)} chain workers through their first pass ` +
  `(the slowest's took ${num(start.workers.slowestMs / 1000, 1)} s; all seen done ${num(start.workersStartedMs / 1000, 1)} s after the spawn), having read ${num(start.workers.eventsRead)} events`;

/**
 * The first start of the service on a filled DATA_DIR, as after an upgrade: the projections catch
 * up (ready), an organization is bootstrapped and funded on one token, and the chain workers read
 * the history once and save their checkpoints (waited for: measuring before that would share the
 * cores with it). Then the service is stopped; the next start is the one to measure.
 */
export const firstStartOnFilledStore = async (lifecycle: Lifecycle, progress: (message: string) => void, dataDir: string, label: string) => {
  const service = await startBenchService(lifecycle, progress, dataDir);
  const readyMs = await service.untilReady(CATCH_UP_TIMEOUT_MS);
  progress(`${label}: first start ready (caught up) after ${num(readyMs / 1000, 1)} s`);
  const org = await bootstrapWithOwnReceiver(lifecycle, service);
  const [token] = await listTokens(org.api);
  if (!token) throw new Error('the devnet enables no token');
  await fundOrganization(lifecycle, org.api, [token], progress);
  progress(`${label}: waiting for ${WORKER_STARTS_WAITED_FOR}`);
  const firstStart: StartFigures = { healthyMs: service.healthyAfterMs, readyMs, ...(await workersStarted(service, org.api.apiKey, lifecycle.signal)) };
  progress(`${label}: first start ${describeStart(firstStart)}; restarting`);
  await service.stop();
  return { org, token, firstStart };
};
