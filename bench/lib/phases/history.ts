import { createApiClient } from '../api.js';
import { fillConfiguredStore } from '../history/data-dir.js';
import type { FillFigures } from '../history/fill.js';
import type { Lifecycle } from '../lifecycle.js';
import type { BenchOrganization, TokenInfo } from '../organization.js';
import { CATCH_UP_TIMEOUT_MS, describeStart, firstStartOnFilledStore, workersStarted, type StartFigures } from '../restarted-service.js';
import { connectServiceDb } from '../service-db.js';
import { benchDataDir, startBenchService, type BenchService } from '../service.js';
import { settleWithdrawals } from '../settled-withdrawals.js';
import { serviceAndServerCpu } from '../process-cpu.js';
import { runWithdrawalPhase, withdrawalTemplates, type WithdrawalPhaseFigures } from './withdrawals.js';

export type { StartFigures } from '../restarted-service.js';

export interface HistoryPhaseFigures {
  fill: FillFigures;
  /** the first start on the filled store, as after an upgrade: the projections apply the whole history, the chain workers read it once and save their checkpoints */
  firstStart: StartFigures;
  /** a restart on it, the workers' checkpoints saved: what the issue's start-up row measures */
  restart: StartFigures & {
    /** from the spawn to a withdrawal requested at ready being Completed: watchers, processors and the chain's confirmations included */
    firstWithdrawalCompletedMs: number;
  };
  load: WithdrawalPhaseFigures;
}

export interface HistoryPhaseOptions {
  lifecycle: Lifecycle;
  events: number;
  organizations: number;
  seconds: number;
  connections: number;
  progress: (message: string) => void;
}

/**
 * The service with a long history: a fresh DATA_DIR filled with `events` realistic events across
 * `organizations` organizations (bench/lib/history); a first start on it (the projections catch up,
 * an organization is bootstrapped and funded on one token, and the bench waits until every chain
 * worker has read the history once and saved its checkpoint); then the service stopped and started
 * again (time to healthy, to ready, to every chain worker through its first pass, and to a first
 * withdrawal completed), then POST /withdrawals under the one-token load of the empty store's phase.
 */
export const runHistoryPhase = async (options: HistoryPhaseOptions): Promise<HistoryPhaseFigures> => {
  const { lifecycle, progress } = options;
  const dataDir = await benchDataDir(lifecycle);
  // the service's own environment (development: its keys are made under DATA_DIR, and the fill seals with them)
  const fill = await fillConfiguredStore({ ...process.env, DATA_DIR: dataDir, NODE_ENV: 'development' }, { events: options.events, organizations: options.organizations, progress, signal: lifecycle.signal });
  progress(`history: ${fill.events} events written in ${(fill.ms / 1000).toFixed(1)} s; starting the service on them`);
  const { org, token, firstStart } = await firstStartOnFilledStore(lifecycle, progress, dataDir, 'history');

  lifecycle.checkpoint();
  const service = await startBenchService(lifecycle, progress, dataDir);
  try {
    return { fill, firstStart, ...(await measureRestarted(options, service, org, token)) };
  } catch (error) {
    progress(`history: the service's last log lines:\n${service.recentLogLines().slice(-15).join('\n')}`);
    throw error;
  }
};

/** The restarted service: ready, its chain workers started and a first withdrawal completed (both from ready on), then the one-token load. */
const measureRestarted = async (options: HistoryPhaseOptions, service: BenchService, org: BenchOrganization, token: TokenInfo) => {
  const { lifecycle, progress } = options;
  const readyMs = await service.untilReady(CATCH_UP_TIMEOUT_MS);
  const api = createApiClient(service.url, org.api.apiKey);
  const [template] = withdrawalTemplates([token]);
  const [workers, settled] = await Promise.all([
    workersStarted(service, api.apiKey, lifecycle.signal),
    settleWithdrawals(api, template!, 1, { referencePrefix: `history-first-${Date.now().toString(36)}`, timeoutMs: 10 * 60_000, signal: lifecycle.signal }),
  ]);
  if (settled.failed.length) throw new Error(`the first withdrawal after the restart failed: ${settled.failed[0]}`);
  const restart = { healthyMs: service.healthyAfterMs, readyMs, ...workers, firstWithdrawalCompletedMs: readyMs + settled.ms };
  progress(
    `history: restart ${describeStart(restart)}; a withdrawal completed ${(restart.firstWithdrawalCompletedMs / 1000).toFixed(1)} s after the spawn` +
      (settled.serverErrors ? ` (GET /withdrawals answered 5xx or reset ${settled.serverErrors} times meanwhile)` : ''),
  );

  lifecycle.checkpoint();
  const db = await connectServiceDb(lifecycle, service.dataDir);
  // each process's and PostgreSQL's CPU over the load, and the projections' stages and event loops, as on the empty store
  const cpuMs = await serviceAndServerCpu(service, db);
  const load = await runWithdrawalPhase({
    name: 'withdrawals-with-history',
    lifecycle,
    org: { ...org, api },
    tokens: [token],
    seconds: options.seconds,
    connections: options.connections,
    db,
    progress,
    cpuMs,
    projectionsUrl: service.projectionsUrl,
    chainsUrl: service.workersUrl,
  });
  await db.close();
  await service.stop();
  return { restart, load };
};
