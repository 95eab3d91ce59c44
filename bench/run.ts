/**
 * End-to-end load benchmark (issue #9): boots `ledgergate serve` as its own process on a fresh
 * DATA_DIR with the devnet, bootstraps an organization, funds it, and measures POST /withdrawals
 * (load from a separate autocannon process), projection lag, webhook deliveries, deposits end to
 * end, a full projection rebuild, the service's peak RSS and the event store side by side with
 * pgbench and Emmett. Progress goes to stderr; one table of figures to stdout at the end.
 *
 *   npm run bench                                          # 60 s per load phase
 *   BENCH_SECONDS=10 BENCH_DEPOSITS=1000 npm run bench     # a quick run
 *   BENCH_PHASES=withdrawals-one-token,rebuild npm run bench
 *   BENCH_SERVICE_NODE_OPTIONS=--cpu-prof npm run bench    # profile the service (CPU.*.cpuprofile in the project root)
 *
 * The service runs as BENCH_SERVICE_PROCESSES says: `split` (the default, the deployment
 * docs/operations.md recommends: one SERVE_ROLE=api and one SERVE_ROLE=workers process on one
 * database), `one` (one SERVE_ROLE=all process, as `npm start`) or any SERVE_ROLE per process,
 * separated by spaces (`api projections webhooks,chains`: the projections in a process of their own). Each
 * withdrawal phase prints the CPU each process and PostgreSQL used over its load, and the event
 * loop's delay of the process running the projections (and of the chains' when it is another).
 *
 * Variables: BENCH_SECONDS (60), BENCH_CONNECTIONS (64), BENCH_DEPOSITS (5000), BENCH_CLIENTS (8,
 * side by side), BENCH_PHASES (all: settlement, withdrawals-one-token, withdrawals-20-tokens,
 * webhooks, deposits, rebuild, history, compare), BENCH_BLOCK_TIME_MS (200),
 * BENCH_QUIET_SECONDS (0: how long a load phase may wait for the earlier phases' background work,
 * their settlements and webhooks, to quiet down; what it starts beside is printed either way),
 * BENCH_SETTLEMENT_COUNT (100 withdrawals queued at once per chain in the settlement phase,
 * bench/lib/phases/settlement.ts, as `npm run bench:settlement` does), BENCH_HISTORY_EVENTS
 * (1,000,000) and BENCH_HISTORY_ORGANIZATIONS (1,000) for the history phase: a service of its own
 * on a store filled with that history first (bench/lib/history), started until its chain workers
 * have read the history once and saved their checkpoints, restarted, then loaded.
 */
import { runBenchmark, type Lifecycle } from './lib/lifecycle.js';
import { startOutboxMonitor } from './lib/outbox-monitor.js';
import { bootstrapOrganization, fundOrganization, listTokens } from './lib/organization.js';
import { afterwardsLine, creditDelayLine, runDepositPhase } from './lib/phases/deposits.js';
import { runHistoryPhase } from './lib/phases/history.js';
import { runRebuildPhase } from './lib/phases/rebuild.js';
import { runSettlementPhase } from './lib/phases/settlement.js';
import { runWebhookPhase } from './lib/phases/webhooks.js';
import { runWithdrawalPhase } from './lib/phases/withdrawals.js';
import { formatReport, machineLine, type RunFigures } from './lib/report.js';
import { connectServiceDb } from './lib/service-db.js';
import { positive } from './lib/settings.js';
import { serviceAndServerCpu } from './lib/process-cpu.js';
import { describeQuietWait, untilQuiet } from './lib/quiet.js';
import { serviceLayout, servicePeakRssMiB, startBenchService } from './lib/service.js';
import { compareAppendThroughput } from './lib/side-by-side.js';
import { summarize } from './lib/stats.js';
import { startBenchWebhookReceiver } from './lib/webhook-receiver.js';

/** how long the deposits phase follows its deposits' webhooks and sweeps after the row's end (printed, not in the row) */
const DEPOSITS_FOLLOW_MS = 120_000;
const PHASES = ['settlement', 'withdrawals-one-token', 'withdrawals-20-tokens', 'webhooks', 'deposits', 'rebuild', 'history', 'compare'] as const;
type Phase = (typeof PHASES)[number];

const selectedPhases = (): Set<Phase> => {
  const text = process.env.BENCH_PHASES?.trim();
  if (!text) return new Set(PHASES);
  const names = text.split(',').map((name) => name.trim()).filter(Boolean);
  const unknown = names.filter((name) => !(PHASES as readonly string[]).includes(name));
  if (unknown.length) throw new Error(`BENCH_PHASES: unknown ${unknown.join(', ')}; known: ${PHASES.join(', ')}`);
  return new Set(names as Phase[]);
};

const progress = (message: string) => console.error(`· ${new Date().toISOString().slice(11, 19)} ${message}`);

const main = async (lifecycle: Lifecycle) => {
  let serviceLog: () => string[] = () => [];
  try {
    await measure(lifecycle, (lines) => (serviceLog = lines));
  } catch (error) {
    const lines = serviceLog();
    if (lines.length) progress(`the service's last log lines:\n${lines.slice(-15).join('\n')}`);
    throw error;
  }
};

const measure = async (lifecycle: Lifecycle, onService: (recentLogLines: () => string[]) => void) => {
  const seconds = positive('BENCH_SECONDS', 60);
  const connections = Math.round(positive('BENCH_CONNECTIONS', 64));
  const depositCount = Math.round(positive('BENCH_DEPOSITS', 5000));
  const compareClients = Math.round(positive('BENCH_CLIENTS', 8));
  const phases = selectedPhases();
  const figures: RunFigures = { seconds, connections, serviceLayout: serviceLayout() };
  progress(machineLine());

  const receiver = await startBenchWebhookReceiver();
  lifecycle.onTeardown('close the webhook receiver', () => receiver.close());
  const service = await startBenchService(lifecycle, progress);
  onService(service.recentLogLines);
  const org = await bootstrapOrganization(service, receiver.url);
  receiver.setSecret(org.webhookSigningSecret);
  // SPEC §4.2: the URL set through the API as an integrator would (bootstrap set it already; this checks the route accepts it)
  await org.api.expect(200, 'PATCH', '/organisation/webhook', { webhookUrl: receiver.url });
  const samplerDb = await connectServiceDb(lifecycle, service.dataDir);
  const monitorDb = await connectServiceDb(lifecycle, service.dataDir);
  const monitor = startOutboxMonitor(monitorDb);
  const cpuMs = await serviceAndServerCpu(service, samplerDb);
  lifecycle.onTeardown('stop the outbox monitor', () => monitor.stop());

  const tokens = await listTokens(org.api);
  if (tokens.length < 20) progress(`only ${tokens.length} tokens are enabled on the devnet chains: the many-token phase spreads over all of them`);
  const manyTokens = tokens.slice(0, 20);
  progress(`funding the organization on ${manyTokens.length} tokens`);
  await fundOrganization(lifecycle, org.api, manyTokens, progress);

  if (phases.has('settlement')) {
    lifecycle.checkpoint();
    const count = Math.round(positive('BENCH_SETTLEMENT_COUNT', 100));
    figures.settlement = await runSettlementPhase({ lifecycle, service, count, blockTimeMs: Number(service.env.DEVNET_BLOCK_TIME_MS), progress });
  }

  /**
   * what each load phase starts beside: the CPU the service and PostgreSQL use over 2 s before it
   * (the earlier phases' settlements, webhooks, sweeps), after waiting up to BENCH_QUIET_SECONDS
   * (0: no wait, the default) for them to quiet down
   */
  const quietSeconds = Number(process.env.BENCH_QUIET_SECONDS ?? 0);
  if (!(quietSeconds >= 0)) throw new Error(`BENCH_QUIET_SECONDS must be 0 or more, not ${process.env.BENCH_QUIET_SECONDS}`);
  figures.phaseStarts = [];
  const beginPhase = async (name: Phase) => {
    lifecycle.checkpoint();
    const start = await untilQuiet({ cpuMs, maxMs: quietSeconds * 1000 });
    progress(`${name}: ${describeQuietWait(start)}`);
    figures.phaseStarts?.push({ phase: name, ...start });
  };

  const withdrawalPhase = async (name: Phase, phaseTokens: typeof tokens) => {
    await beginPhase(name);
    const result = await runWithdrawalPhase({ name, lifecycle, org, tokens: phaseTokens, seconds, connections, db: samplerDb, progress, cpuMs, projectionsUrl: service.projectionsUrl, chainsUrl: service.workersUrl });
    progress(`${name}: projection lag p50 ${result.lag.p50.toFixed(1)} ms, p99 ${result.lag.p99.toFixed(1)} ms over ${result.lag.count} positions`);
    return result;
  };
  if (phases.has('withdrawals-one-token')) figures.oneToken = await withdrawalPhase('withdrawals-one-token', manyTokens.slice(0, 1));
  if (phases.has('withdrawals-20-tokens')) figures.manyTokens = await withdrawalPhase('withdrawals-20-tokens', manyTokens);
  // both phases' lag samples pooled (each phase's own are on stderr)
  const loaded = [figures.oneToken, figures.manyTokens].filter((phase) => phase !== undefined);
  if (loaded.length) figures.lag = { ...summarize(loaded.flatMap((phase) => phase.lagsMs)), unresolved: loaded.reduce((sum, phase) => sum + phase.lag.unresolved, 0) };

  if (phases.has('webhooks')) {
    await beginPhase('webhooks');
    figures.webhooks = await runWebhookPhase({ lifecycle, service, org, tokens: manyTokens, seconds, connections, receiver, monitor, progress });
    const hooks = figures.webhooks;
    progress(
      `webhooks: ${hooks.underLoadPerSecond.toFixed(0)}/s while the load ran with deliveries due (${hooks.underLoadBacklogSeconds.toFixed(1)} s, ${hooks.released} released from parking): the dispatcher's capacity under load; ` +
        `${hooks.producedPerSecond.toFixed(0)}/s produced by the load and delivered; ${hooks.sustainedPerSecond.toFixed(0)}/s over the run's ${hooks.backlogSeconds.toFixed(1)} s of backlog; ` +
        `by type: ${[...receiver.byType].map(([type, count]) => `${type} ${count}`).join(', ')}`,
    );
    progress(
      `webhooks: arrived during the load: the loaded organization's ${hooks.loadedArrivedDuringLoad}, the released backlog's ${hooks.releasedArrivedDuringLoad}; ` +
        `the loaded organization's webhooks behind their events: p50 ${hooks.loadedDelayMs.p50.toFixed(0)} ms, p99 ${hooks.loadedDelayMs.p99.toFixed(0)} ms, max ${hooks.loadedDelayMs.max.toFixed(0)} ms (${hooks.loadedDelayMs.count})`,
    );
  }
  if (phases.has('deposits')) {
    await beginPhase('deposits');
    const db = { read: samplerDb.query, orgId: org.orgId, followMs: DEPOSITS_FOLLOW_MS };
    figures.deposits = await runDepositPhase({ lifecycle, api: org.api, tokens: manyTokens, count: depositCount, progress, db });
    progress(`deposits: ${figures.deposits.endToEndPerSecond.toFixed(0)}/s end to end (${(figures.deposits.endToEndMs / 1000).toFixed(1)} s), injection ${figures.deposits.injectionPerSecond.toFixed(0)}/s`);
    progress(`deposits: ${creditDelayLine(figures.deposits.service!.credit)}`);
    progress(`deposits: ${afterwardsLine(figures.deposits.service!)}`);
  }
  if (phases.has('rebuild')) {
    await beginPhase('rebuild');
    figures.rebuild = await runRebuildPhase(service, samplerDb, progress);
    progress(`rebuild: ${figures.rebuild.eventsPerSecond.toFixed(0)} events/s (${figures.rebuild.rebuildMs} ms rebuilding, ${figures.rebuild.wallMs.toFixed(0)} ms with the CLI's start-up)`);
  }

  const peaks = await servicePeakRssMiB(service);
  const known = [...peaks.values()].filter((peak) => peak !== null);
  figures.peakRssMiB = known.length ? Math.max(...known) : null;
  figures.peakRssByProcessMiB = peaks;
  progress(`service peak RSS: ${[...peaks].map(([role, peak]) => `${role} ${peak?.toFixed(0) ?? '?'} MiB`).join(', ')}; stopping the service`);
  await monitor.stop();
  await samplerDb.close();
  await monitorDb.close();
  await service.stop();

  if (phases.has('history')) {
    lifecycle.checkpoint();
    const events = Math.round(positive('BENCH_HISTORY_EVENTS', 1_000_000));
    const organizations = Math.round(positive('BENCH_HISTORY_ORGANIZATIONS', 1_000));
    figures.history = await runHistoryPhase({ lifecycle, events, organizations, seconds, connections, progress });
  }
  if (phases.has('compare')) {
    lifecycle.checkpoint();
    figures.compare = await compareAppendThroughput({ seconds, clients: compareClients, lifecycle, progress });
  }
  console.log(formatReport(figures));
};

await runBenchmark(main);
