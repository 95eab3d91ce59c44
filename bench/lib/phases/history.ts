import { createApiClient } from '../api.js';
import { fillConfiguredStore } from '../history/data-dir.js';
import type { FillFigures } from '../history/fill.js';
import type { Lifecycle } from '../lifecycle.js';
import { bootstrapWithOwnReceiver, fundOrganization, listTokens, type BenchOrganization, type TokenInfo } from '../organization.js';
import { connectServiceDb } from '../service-db.js';
import { benchDataDir, startBenchService, type BenchService } from '../service.js';
import { settleWithdrawals } from '../settled-withdrawals.js';
import { runWithdrawalPhase, withdrawalTemplates, type WithdrawalPhaseFigures } from './withdrawals.js';

export interface StartFigures {
  /** from the spawn to /healthz 200 */
  healthyMs: number;
  /** from the spawn to /readyz 200: every projection caught up with what the store held at start */
  readyMs: number;
}

export interface HistoryPhaseFigures {
  fill: FillFigures;
  /** the first start on the filled store: the projections apply the whole history */
  firstStart: StartFigures;
  /** a restart on it, as after an upgrade: what the start-up row measures */
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

const CATCH_UP_TIMEOUT_MS = 60 * 60_000;

/**
 * The service with a long history: a fresh DATA_DIR filled with `events` realistic events across
 * `organizations` organizations (bench/lib/history), the service started on it (the projections
 * catch up), an organization bootstrapped and funded on one token, the service stopped and started
 * again (time to healthy, to ready, and to a first withdrawal completed), then POST /withdrawals
 * under the one-token load of the empty store's phase.
 */
export const runHistoryPhase = async (options: HistoryPhaseOptions): Promise<HistoryPhaseFigures> => {
  const { lifecycle, progress } = options;
  const dataDir = await benchDataDir(lifecycle);
  // the service's own environment (development: its keys are made under DATA_DIR, and the fill seals with them)
  const fill = await fillConfiguredStore({ ...process.env, DATA_DIR: dataDir, NODE_ENV: 'development' }, { events: options.events, organizations: options.organizations, progress, signal: lifecycle.signal });
  progress(`history: ${fill.events} events written in ${(fill.ms / 1000).toFixed(1)} s; starting the service on them`);

  const first = await startBenchService(lifecycle, progress, dataDir);
  const firstStart = { healthyMs: first.healthyAfterMs, readyMs: await first.untilReady(CATCH_UP_TIMEOUT_MS) };
  progress(`history: first start healthy after ${(firstStart.healthyMs / 1000).toFixed(1)} s, ready (caught up) after ${(firstStart.readyMs / 1000).toFixed(1)} s`);
  const org = await bootstrapWithOwnReceiver(lifecycle, first);
  const [token] = await listTokens(org.api);
  if (!token) throw new Error('the devnet enables no token');
  await fundOrganization(lifecycle, org.api, [token], progress);
  await first.stop();

  lifecycle.checkpoint();
  const service = await startBenchService(lifecycle, progress, dataDir);
  try {
    return { fill, firstStart, ...(await measureRestarted(options, service, org, token)) };
  } catch (error) {
    progress(`history: the service's last log lines:\n${service.recentLogLines().slice(-15).join('\n')}`);
    throw error;
  }
};

/** The restarted service: ready, a first withdrawal completed, then the one-token load. */
const measureRestarted = async (options: HistoryPhaseOptions, service: BenchService, org: BenchOrganization, token: TokenInfo) => {
  const { lifecycle, progress } = options;
  const readyMs = await service.untilReady(CATCH_UP_TIMEOUT_MS);
  const api = createApiClient(service.url, org.api.apiKey);
  const [template] = withdrawalTemplates([token]);
  const settled = await settleWithdrawals(api, template!, 1, { referencePrefix: `history-first-${Date.now().toString(36)}`, timeoutMs: 10 * 60_000, signal: lifecycle.signal });
  if (settled.failed.length) throw new Error(`the first withdrawal after the restart failed: ${settled.failed[0]}`);
  const restart = { healthyMs: service.healthyAfterMs, readyMs, firstWithdrawalCompletedMs: readyMs + settled.ms };
  progress(
    `history: restart healthy after ${(restart.healthyMs / 1000).toFixed(1)} s, ready after ${(readyMs / 1000).toFixed(1)} s, a withdrawal completed ${(restart.firstWithdrawalCompletedMs / 1000).toFixed(1)} s after the spawn` +
      (settled.serverErrors ? ` (GET /withdrawals answered 5xx or reset ${settled.serverErrors} times meanwhile)` : ''),
  );

  lifecycle.checkpoint();
  const db = await connectServiceDb(lifecycle, service.dataDir);
  const load = await runWithdrawalPhase({ name: 'withdrawals-with-history', lifecycle, org: { ...org, api }, tokens: [token], seconds: options.seconds, connections: options.connections, db, progress });
  await db.close();
  await service.stop();
  return { restart, load };
};
