import os from 'node:os';
import type { SideBySideFigures } from './side-by-side.js';
import type { DepositPhaseFigures } from './phases/deposits.js';
import type { HistoryPhaseFigures } from './phases/history.js';
import type { ChainSettlement, SettlementFigures } from './phases/settlement.js';
import type { RebuildFigures } from './phases/rebuild.js';
import type { WebhookPhaseFigures } from './phases/webhooks.js';
import type { WithdrawalPhaseFigures } from './phases/withdrawals.js';
import { describeQuietWait, type QuietWait } from './quiet.js';
import { describeLayout } from './service.js';
import type { LatencySummary } from './stats.js';
import { formatTable, num } from './table.js';

/** Whatever the run measured; a phase not run (BENCH_PHASES) is absent. */
export interface RunFigures {
  seconds: number;
  connections: number;
  oneToken?: WithdrawalPhaseFigures;
  manyTokens?: WithdrawalPhaseFigures;
  lag?: LatencySummary & { unresolved: number };
  webhooks?: WebhookPhaseFigures;
  deposits?: DepositPhaseFigures;
  rebuild?: RebuildFigures;
  compare?: SideBySideFigures;
  peakRssMiB?: number | null;
  /** each service process's peak RSS, MiB, by role (more than one when the service is split) */
  peakRssByProcessMiB?: Map<string, number | null>;
  /** how the service ran: one process, or an api and a workers process */
  serviceLayout?: string;
  settlement?: SettlementFigures;
  history?: HistoryPhaseFigures;
  /** the background each load phase started beside, after waiting up to BENCH_QUIET_SECONDS for it to quiet down */
  phaseStarts?: (QuietWait & { phase: string })[];
}

type Verdict = boolean | null;
interface Row {
  figure: string;
  measured: string;
  target: string;
  met: Verdict;
}

const NOT_RUN = 'not run';
const ms = (value: number) => `${num(value, value < 10 ? 1 : 0)} ms`;

const withdrawalRow = (label: string, figures: WithdrawalPhaseFigures | undefined, target: { text: string; perSecond: number; p99Ms: number }): Row => {
  if (!figures) return { figure: label, measured: NOT_RUN, target: target.text, met: null };
  const { createdPerSecond, latencyMs, errors, cpuMs, loadMs } = figures;
  const cores = cpuMs ? `; cores busy: ${[...cpuMs].map(([name, used]) => `${name} ${num(used / loadMs, 2)}`).join(', ')}` : '';
  return {
    figure: label,
    measured: `${num(createdPerSecond)}/s, p50 ${ms(latencyMs.p50)}, p99 ${ms(latencyMs.p99)}, ${num(errors)} errors${cores}`,
    target: target.text,
    met: createdPerSecond >= target.perSecond && latencyMs.p99 <= target.p99Ms && errors === 0,
  };
};

const seconds = (valueMs: number) => `${num(valueMs / 1000, 1)} s`;

/** The deposits row's service part, beside it: no target of its own (the issue's target is the row above). */
const depositServiceRows = (deposits: DepositPhaseFigures | undefined): Row[] => {
  const credit = deposits?.service?.credit;
  if (!deposits?.service || !credit) return [];
  const { stages } = deposits.service;
  const reached = (valueMs: number | null, done: number, of: number) => (valueMs === null ? `${num(done)} of ${num(of)} in ${seconds(deposits.service!.followMs)}` : seconds(valueMs));
  return [
    {
      figure: 'deposits: the service’s part (from each chain’s required depth reached to the credit; the devnet’s block times excluded)',
      measured:
        `credit delay p50 ${seconds(credit.delay.p50)}, p99 ${seconds(credit.delay.p99)}, max ${seconds(credit.delay.max)}; ` +
        `${num(credit.creditedPerSecond)}/s credited once confirmable (first depth reached → last credit)`,
      target: 'the row above’s part',
      met: null,
    },
    {
      figure: 'deposits: afterwards (not in the row; after the first injection)',
      measured:
        `sweeps settled ${reached(stages.sweepsSettledMs, stages.counts.sweepsSettled, stages.counts.sweepsScheduled)}, ` +
        `webhooks delivered ${reached(stages.webhooksDeliveredMs, stages.counts.webhooksDelivered, stages.counts.webhooksMade)}`,
      target: '-',
      met: null,
    },
  ];
};
const HISTORY_START_TARGET_MS = 10_000;

const historyRows = (figures: RunFigures): Row[] => {
  const history = figures.history;
  const events = history ? num(history.fill.events) : '1,000,000';
  const startTarget = '≤ 10 s to healthy and ready, watchers and processors included';
  const p99Target = "within 10 % of the empty store's";
  if (!history) {
    return [
      { figure: `start-up with ${events} events in the store`, measured: NOT_RUN, target: startTarget, met: null },
      { figure: `POST /withdrawals p99 with ${events} events in the store`, measured: NOT_RUN, target: p99Target, met: null },
    ];
  }
  const { restart, firstStart, load } = history;
  const empty = figures.oneToken?.latencyMs.p99;
  return [
    {
      figure: `start-up with ${events} events in the store (${num(history.fill.organizations)} organizations)`,
      measured:
        `restart: healthy ${seconds(restart.healthyMs)}, ready ${seconds(restart.readyMs)}, ${num(restart.workers.workers)} chain workers through their first pass ` +
        `${seconds(restart.workersStartedMs)} (${num(restart.workers.eventsRead)} events read), a withdrawal completed ${seconds(restart.firstWithdrawalCompletedMs)} after the spawn; ` +
        `first start (catching up, workers reading the history once) ready ${seconds(firstStart.readyMs)}, the slowest worker's first pass ${seconds(firstStart.workers.slowestMs)} (${num(firstStart.workers.eventsRead)} events read)`,
      target: startTarget,
      met: Math.max(restart.healthyMs, restart.readyMs, restart.workersStartedMs) <= HISTORY_START_TARGET_MS,
    },
    {
      figure: `POST /withdrawals p99 with ${events} events in the store`,
      measured:
        `p99 ${ms(load.latencyMs.p99)}` +
        (empty === undefined ? ' (empty store: not run)' : ` vs ${ms(empty)} empty (${load.latencyMs.p99 >= empty ? '+' : ''}${num(((load.latencyMs.p99 - empty) / empty) * 100)} %)`) +
        `; ${num(load.createdPerSecond)}/s, ${num(load.errors)} errors`,
      target: p99Target,
      met: empty === undefined ? null : load.latencyMs.p99 <= empty * 1.1 && load.errors === 0,
    },
  ];
};

const settlementRows = (settlement: SettlementFigures | undefined): Row[] => {
  const evmTarget = "all 100 completed within the chain's confirmation time + 10 s";
  const bitcoinTarget = 'batched: one transaction pays many withdrawals';
  const settled = (chain: ChainSettlement) =>
    `${num(chain.completed)} of ${num(chain.withdrawals)} completed in ${seconds(chain.ms)}${chain.failed.length ? `, ${num(chain.failed.length)} failed` : ''}, by ${num(chain.transactions)} transactions`;
  if (!settlement) {
    return [
      { figure: '100 withdrawals queued on one chain (devnet, one organization)', measured: NOT_RUN, target: evmTarget, met: null },
      { figure: 'the same on Bitcoin', measured: NOT_RUN, target: bitcoinTarget, met: null },
    ];
  }
  const { evm, bitcoin } = settlement;
  return [
    {
      figure: `${num(evm.withdrawals)} withdrawals queued on one chain (devnet ${evm.chainId}, one organization)`,
      measured: `${settled(evm)}; the chain's confirmation time ${seconds(evm.confirmationMs)}`,
      target: evmTarget,
      met: evm.completed === evm.withdrawals && evm.ms <= evm.confirmationMs + 10_000,
    },
    {
      figure: `the same on Bitcoin (${bitcoin.chainId})`,
      measured: `${settled(bitcoin)}; the chain's confirmation time ${seconds(bitcoin.confirmationMs)}`,
      target: bitcoinTarget,
      met: bitcoin.completed === bitcoin.withdrawals && bitcoin.transactions < bitcoin.completed,
    },
  ];
};

const ratio = (ours: number, theirs: number | null) => (theirs && theirs > 0 ? ours / theirs : Number.NaN);

/** ` (the largest of: api 213 MiB, workers 224 MiB)` when the service ran as several processes */
const byProcessRss = (peaks: Map<string, number | null> | undefined) =>
  peaks && peaks.size > 1 ? ` (the largest of: ${[...peaks].map(([role, peak]) => `${role} ${peak === null ? '?' : num(peak)} MiB`).join(', ')})` : '';

export const reportRows = (figures: RunFigures): Row[] => {
  const { compare } = figures;
  const pgbenchRatio = compare ? ratio(compare.ledgergateAppendsPerSecond, compare.pgbenchTps) : Number.NaN;
  const emmettRatio = compare ? ratio(compare.ledgergateAppendsPerSecond, compare.emmettAppendsPerSecond) : Number.NaN;
  const rss = figures.peakRssMiB;
  return [
    withdrawalRow(`POST /withdrawals, one token (${figures.connections} connections, ${figures.seconds} s)`, figures.oneToken, { text: '≥ 1,500/s, p99 ≤ 100 ms, 0 errors', perSecond: 1500, p99Ms: 100 }),
    withdrawalRow(`POST /withdrawals, ${figures.manyTokens?.tokens ?? 20} tokens round-robin`, figures.manyTokens, { text: '≥ 1,200/s, p99 ≤ 150 ms', perSecond: 1200, p99Ms: 150 }),
    figures.lag && figures.lag.count > 0
      ? {
          figure: `projection lag under withdrawal load (${num(figures.lag.count)} positions)`,
          measured: `p50 ${ms(figures.lag.p50)}, p99 ${ms(figures.lag.p99)}${figures.lag.unresolved ? `, ${figures.lag.unresolved} never caught up` : ''}`,
          target: 'p99 ≤ 100 ms',
          met: figures.lag.p99 <= 100 && figures.lag.unresolved === 0,
        }
      : { figure: 'projection lag under withdrawal load', measured: NOT_RUN, target: 'p99 ≤ 100 ms', met: null },
    figures.webhooks
      ? {
          figure: `webhook deliveries while the load runs (dispatcher's capacity: a parked backlog released as the load starts; ${num(figures.webhooks.underLoadBacklogSeconds, 1)} s with deliveries due)`,
          measured:
            `${num(figures.webhooks.underLoadPerSecond)}/s; the load's own ${num(figures.webhooks.producedPerSecond)}/s produced and delivered; ` +
            `${num(figures.webhooks.deliveredTotal)} delivered in all; during the load ${num(figures.webhooks.loadedArrivedDuringLoad)} of the loaded organization's ` +
            `arrived beside ${num(figures.webhooks.releasedArrivedDuringLoad)} of the backlog's, its webhooks p50 ${num(figures.webhooks.loadedDelayMs.p50)} / p99 ${num(figures.webhooks.loadedDelayMs.p99)} ms behind their events` +
            (figures.webhooks.leftDue ? `, ${num(figures.webhooks.leftDue)} still due` : ', drained'),
          target: '≥ 2,000/s',
          met: figures.webhooks.underLoadPerSecond >= 2000,
        }
      : { figure: 'webhook deliveries', measured: NOT_RUN, target: '≥ 2,000/s', met: null },
    figures.deposits
      ? {
          figure: `deposits end to end (${num(figures.deposits.deposits)} transfers, ${figures.deposits.users} users)`,
          measured: `${num(figures.deposits.endToEndPerSecond)}/s (injection alone ${num(figures.deposits.injectionPerSecond)}/s)`,
          target: '≥ 5,000/s',
          met: figures.deposits.endToEndPerSecond >= 5000,
        }
      : { figure: 'deposits end to end', measured: NOT_RUN, target: '≥ 5,000/s', met: null },
    ...depositServiceRows(figures.deposits),
    figures.rebuild
      ? {
          figure: `projection rebuild (${num(figures.rebuild.events)} events, every projection)`,
          measured: `${num(figures.rebuild.eventsPerSecond)} events/s`,
          target: '≥ 30,000 events/s',
          met: figures.rebuild.eventsPerSecond >= 30_000,
        }
      : { figure: 'projection rebuild', measured: NOT_RUN, target: '≥ 30,000 events/s', met: null },
    compare
      ? {
          figure: `event store appends vs pgbench equivalent (${compare.clients} clients)`,
          measured:
            compare.pgbenchTps === null
              ? `${num(compare.ledgergateAppendsPerSecond)}/s vs pgbench: ${compare.pgbenchNote ?? 'not available'}`
              : `${num(pgbenchRatio, 2)} (${num(compare.ledgergateAppendsPerSecond)}/s vs ${num(compare.pgbenchTps)} tps)`,
          target: '≥ 1.0',
          met: Number.isFinite(pgbenchRatio) ? pgbenchRatio >= 1 : null,
        }
      : { figure: 'event store appends vs pgbench equivalent', measured: NOT_RUN, target: '≥ 1.0', met: null },
    compare
      ? {
          figure: 'event store appends vs Emmett PostgreSQL',
          measured: `${num(emmettRatio, 2)} (${num(compare.ledgergateAppendsPerSecond)}/s vs ${num(compare.emmettAppendsPerSecond)}/s)`,
          target: '≥ 2.0',
          met: Number.isFinite(emmettRatio) ? emmettRatio >= 2 : null,
        }
      : { figure: 'event store appends vs Emmett PostgreSQL', measured: NOT_RUN, target: '≥ 2.0', met: null },
    {
      figure: 'service peak RSS (VmHWM)',
      measured: rss === undefined || rss === null ? 'not measured' : `${num(rss)} MiB${byProcessRss(figures.peakRssByProcessMiB)}`,
      target: '≤ 256 MiB',
      met: rss === undefined || rss === null ? null : rss <= 256,
    },
    ...historyRows(figures),
    ...settlementRows(figures.settlement),
  ];
};

export const machineLine = () =>
  `machine: ${os.cpus().length} cores (${os.cpus()[0]?.model.trim() ?? 'unknown CPU'}), ${num(os.totalmem() / 2 ** 30, 1)} GiB RAM, node ${process.version}, ${os.platform()} ${os.release()}`;

const layoutLine = (layout: RunFigures['serviceLayout']) =>
  layout === undefined ? [] : [`service: ${describeLayout(layout)} (BENCH_SERVICE_PROCESSES=${layout})`];

const phaseStartsLine = (starts: RunFigures['phaseStarts']) =>
  starts === undefined || starts.length === 0 ? [] : [`what each phase started beside: ${starts.map(({ phase, ...start }) => `${phase}: ${describeQuietWait(start)}`).join('; ')}`];

export const formatReport = (figures: RunFigures): string =>
  [
    machineLine(),
    ...layoutLine(figures.serviceLayout),
    ...phaseStartsLine(figures.phaseStarts),
    '',
    formatTable(
      [{ header: 'Figure' }, { header: 'Measured' }, { header: 'Target' }, { header: 'Met' }],
      reportRows(figures).map((row) => [row.figure, row.measured, row.target, row.met === null ? '-' : row.met ? 'met' : 'NOT met']),
    ),
  ].join('\n');
