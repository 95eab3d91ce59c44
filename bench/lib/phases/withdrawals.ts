import type { Lifecycle } from '../lifecycle.js';
import { runLoad, summarizeLoad, type WithdrawalTemplate } from '../load.js';
import type { BenchOrganization, TokenInfo } from '../organization.js';
import { externalAddress } from '../organization.js';
import { startLagSampler } from '../projection-lag.js';
import { describeEventLoopDelay, describeProjectionLags, describeProjectionStages } from '../projection-stages.js';
import { scrapeMetrics } from '../request-stages.js';
import type { ServiceDb } from '../service-db.js';
import { summarize, type LatencySummary } from '../stats.js';

export interface WithdrawalPhaseFigures {
  tokens: number;
  created: number;
  createdPerSecond: number;
  latencyMs: { p50: number; p99: number; max: number };
  errors: number;
  /** append → read model, over the positions the phase produced */
  lag: LatencySummary & { unresolved: number };
  /** every lag sample (ms), to pool the phases */
  lagsMs: number[];
  /** CPU used over the load, ms, by process (`all`, or `api` and `workers`; `postgres`: every server process); absent when not sampled */
  cpuMs?: Map<string, number>;
  /** the load's own length, ms (CPU ÷ this = cores busy) */
  loadMs: number;
}

/** The smallest withdrawal each token allows, to the devnet's own (external) address: the balance lasts. */
export const withdrawalTemplates = (tokens: TokenInfo[]): WithdrawalTemplate[] =>
  tokens.map((token) => ({ chainId: token.chainId, tokenId: token.id, amount: token.properties.minimumWithdrawal, recipient: externalAddress(token.chainId) }));

export interface WithdrawalPhaseOptions {
  name: string;
  lifecycle: Lifecycle;
  org: BenchOrganization;
  tokens: TokenInfo[];
  seconds: number;
  connections: number;
  db: ServiceDb;
  progress: (message: string) => void;
  /** CPU used so far by each of the service's processes and its PostgreSQL, ms */
  cpuMs?: () => Promise<Map<string, number>>;
  /** the /metrics of the process running the projections: each projection's batches over the load are printed */
  projectionsUrl?: string;
  /** the /metrics of the process running the chains, when it is another: its event-loop delay is printed too */
  chainsUrl?: string;
}

/** CPU used between two samples, by process */
const cpuBetween = (before: Map<string, number>, after: Map<string, number>) => new Map([...after].map(([name, ms]) => [name, ms - (before.get(name) ?? 0)]));

/** `api 0.84 cores (1.52 ms a withdrawal), …` */
export const describeCpu = (cpuMs: Map<string, number>, loadMs: number, created: number) =>
  [...cpuMs].map(([name, ms]) => `${name} ${(ms / loadMs).toFixed(2)} cores (${created > 0 ? (ms / created).toFixed(2) : '?'} ms a withdrawal)`).join(', ');

/**
 * POST /withdrawals at `connections` concurrent requests for `seconds` (load from its own
 * process), round-robin over the tokens, each with a fresh reference; the projection-lag sampler
 * runs meanwhile and drains for up to 30 s afterwards.
 */
export const runWithdrawalPhase = async (options: WithdrawalPhaseOptions): Promise<WithdrawalPhaseFigures> => {
  const { progress } = options;
  progress(`${options.name}: ${options.connections} connections for ${options.seconds} s over ${options.tokens.length} token(s)`);
  const sampler = await startLagSampler(options.db);
  const cpuBefore = await options.cpuMs?.();
  const projectionsBefore = options.projectionsUrl ? await scrapeMetrics(options.projectionsUrl) : null;
  const loadStartedAt = performance.now();
  const outcome = await runLoad(options.lifecycle, {
    url: options.org.api.url,
    apiKey: options.org.api.apiKey,
    seconds: options.seconds,
    connections: options.connections,
    referencePrefix: `${options.name}-${Date.now().toString(36)}`,
    templates: withdrawalTemplates(options.tokens),
  }).then(
    (report) => ({ report }),
    (error: unknown) => ({ error }),
  );
  const loadMs = performance.now() - loadStartedAt;
  const cpuAfter = await options.cpuMs?.();
  const lag = await sampler.stop(30_000);
  if (projectionsBefore && options.projectionsUrl) {
    const projectionsAfter = await scrapeMetrics(options.projectionsUrl);
    progress(`${options.name}: ${describeProjectionStages(projectionsBefore, projectionsAfter).join('\n')}`);
    if (options.chainsUrl && options.chainsUrl !== options.projectionsUrl) {
      progress(`${options.name}: ${describeEventLoopDelay(projectionsAfter, 'the projections process')}`);
      progress(`${options.name}: ${describeEventLoopDelay(await scrapeMetrics(options.chainsUrl), 'the chains process')}`);
    } else progress(`${options.name}: ${describeEventLoopDelay(projectionsAfter)}`);
  }
  progress(`${options.name}: ${describeProjectionLags(lag.byProjection)}`);
  if ('error' in outcome) throw outcome.error;
  const { report } = outcome;
  const load = summarizeLoad(report);
  progress(
    `${options.name}: ${load.created} created (${load.createdPerSecond.toFixed(0)}/s), p50 ${report.latencyMs.p50} ms, p99 ${report.latencyMs.p99} ms, ` +
      `${load.errors} errors${load.breakdown.length ? ` (${load.breakdown.join(', ')})` : ''}; lag: ${lag.lagsMs.length} positions, ${lag.unresolved} unresolved`,
  );
  const cpuMs = cpuBefore && cpuAfter ? cpuBetween(cpuBefore, cpuAfter) : undefined;
  if (cpuMs) progress(`${options.name}: CPU over the load: ${describeCpu(cpuMs, loadMs, load.created)}`);
  return {
    tokens: options.tokens.length,
    created: load.created,
    createdPerSecond: load.createdPerSecond,
    latencyMs: report.latencyMs,
    errors: load.errors,
    lag: { ...summarize(lag.lagsMs), unresolved: lag.unresolved },
    lagsMs: lag.lagsMs,
    ...(cpuMs ? { cpuMs } : {}),
    loadMs,
  };
};
