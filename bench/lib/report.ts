import os from 'node:os';
import type { SideBySideFigures } from './side-by-side.js';
import type { DepositPhaseFigures } from './phases/deposits.js';
import type { RebuildFigures } from './phases/rebuild.js';
import type { WebhookPhaseFigures } from './phases/webhooks.js';
import type { WithdrawalPhaseFigures } from './phases/withdrawals.js';
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
const MIB_PER_MB = 1e6 / 2 ** 20;

const withdrawalRow = (label: string, figures: WithdrawalPhaseFigures | undefined, target: { text: string; check: boolean }): Row => {
  if (!figures) return { figure: label, measured: NOT_RUN, target: target.text, met: null };
  const { createdPerSecond, latencyMs, errors } = figures;
  return {
    figure: label,
    measured: `${num(createdPerSecond)}/s, p50 ${ms(latencyMs.p50)}, p99 ${ms(latencyMs.p99)}, ${num(errors)} errors`,
    target: target.text,
    met: target.check ? createdPerSecond >= 1500 && latencyMs.p99 <= 100 && errors === 0 : null,
  };
};

const ratio = (ours: number, theirs: number | null) => (theirs && theirs > 0 ? ours / theirs : Number.NaN);

export const reportRows = (figures: RunFigures): Row[] => {
  const { compare } = figures;
  const pgbenchRatio = compare ? ratio(compare.ledgergateAppendsPerSecond, compare.pgbenchTps) : Number.NaN;
  const emmettRatio = compare ? ratio(compare.ledgergateAppendsPerSecond, compare.emmettAppendsPerSecond) : Number.NaN;
  const rss = figures.peakRssMiB;
  return [
    withdrawalRow(`POST /withdrawals, one token (${figures.connections} connections, ${figures.seconds} s)`, figures.oneToken, {
      text: '≥ 1,500/s, p99 ≤ 100 ms, 0 errors',
      check: true,
    }),
    withdrawalRow(`POST /withdrawals, ${figures.manyTokens?.tokens ?? 20} tokens round-robin`, figures.manyTokens, { text: '(no target)', check: false }),
    figures.deposits
      ? {
          figure: `deposits end to end (${num(figures.deposits.deposits)} transfers, ${figures.deposits.users} users)`,
          measured: `${num(figures.deposits.endToEndPerSecond)}/s (injection alone ${num(figures.deposits.injectionPerSecond)}/s)`,
          target: '≥ 5,000/s',
          met: figures.deposits.endToEndPerSecond >= 5000,
        }
      : { figure: 'deposits end to end', measured: NOT_RUN, target: '≥ 5,000/s', met: null },
    figures.lag && figures.lag.count > 0
      ? {
          figure: `projection lag under withdrawal load (${num(figures.lag.count)} positions)`,
          measured: `p50 ${ms(figures.lag.p50)}, p99 ${ms(figures.lag.p99)}${figures.lag.unresolved ? `, ${figures.lag.unresolved} never caught up` : ''}`,
          target: 'p99 ≤ 200 ms',
          met: figures.lag.p99 <= 200 && figures.lag.unresolved === 0,
        }
      : { figure: 'projection lag under withdrawal load', measured: NOT_RUN, target: 'p99 ≤ 200 ms', met: null },
    figures.webhooks
      ? {
          figure: `webhook deliveries (while the outbox had a backlog, ${num(figures.webhooks.backlogSeconds, 1)} s)`,
          measured:
            `${num(figures.webhooks.sustainedPerSecond)}/s; ${num(figures.webhooks.deliveredTotal)} delivered in all` +
            (figures.webhooks.leftDue ? `, ${num(figures.webhooks.leftDue)} still due` : ', drained'),
          target: '≥ 1,000/s',
          met: figures.webhooks.sustainedPerSecond >= 1000,
        }
      : { figure: 'webhook deliveries', measured: NOT_RUN, target: '≥ 1,000/s', met: null },
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
          target: '≥ 0.5',
          met: Number.isFinite(pgbenchRatio) ? pgbenchRatio >= 0.5 : null,
        }
      : { figure: 'event store appends vs pgbench equivalent', measured: NOT_RUN, target: '≥ 0.5', met: null },
    compare
      ? {
          figure: 'event store appends vs Emmett PostgreSQL',
          measured: `${num(emmettRatio, 2)} (${num(compare.ledgergateAppendsPerSecond)}/s vs ${num(compare.emmettAppendsPerSecond)}/s)`,
          target: '≥ 1.0',
          met: Number.isFinite(emmettRatio) ? emmettRatio >= 1 : null,
        }
      : { figure: 'event store appends vs Emmett PostgreSQL', measured: NOT_RUN, target: '≥ 1.0', met: null },
    {
      figure: 'service peak RSS (VmHWM)',
      measured: rss === undefined || rss === null ? 'not measured' : `${num(rss)} MiB`,
      target: `≤ 400 MB (${num(400 * MIB_PER_MB)} MiB)`,
      met: rss === undefined || rss === null ? null : rss <= 400 * MIB_PER_MB,
    },
  ];
};

export const machineLine = () =>
  `machine: ${os.cpus().length} cores (${os.cpus()[0]?.model.trim() ?? 'unknown CPU'}), ${num(os.totalmem() / 2 ** 30, 1)} GiB RAM, node ${process.version}, ${os.platform()} ${os.release()}`;

export const formatReport = (figures: RunFigures): string =>
  [
    machineLine(),
    '',
    formatTable(
      [{ header: 'Figure' }, { header: 'Measured' }, { header: 'Target' }, { header: 'Met' }],
      reportRows(figures).map((row) => [row.figure, row.measured, row.target, row.met === null ? '-' : row.met ? 'met' : 'NOT met']),
    ),
  ].join('\n');
