import type { Lifecycle } from '../lifecycle.js';
import { runLoad, summarizeLoad, type WithdrawalTemplate } from '../load.js';
import type { BenchOrganization, TokenInfo } from '../organization.js';
import { externalAddress } from '../organization.js';
import { startLagSampler } from '../projection-lag.js';
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
}

/**
 * POST /withdrawals at `connections` concurrent requests for `seconds` (load from its own
 * process), round-robin over the tokens, each with a fresh reference; the projection-lag sampler
 * runs meanwhile and drains for up to 30 s afterwards.
 */
export const runWithdrawalPhase = async (options: WithdrawalPhaseOptions): Promise<WithdrawalPhaseFigures> => {
  const { progress } = options;
  progress(`${options.name}: ${options.connections} connections for ${options.seconds} s over ${options.tokens.length} token(s)`);
  const sampler = await startLagSampler(options.db);
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
  const lag = await sampler.stop(30_000);
  if ('error' in outcome) throw outcome.error;
  const { report } = outcome;
  const load = summarizeLoad(report);
  progress(
    `${options.name}: ${load.created} created (${load.createdPerSecond.toFixed(0)}/s), p50 ${report.latencyMs.p50} ms, p99 ${report.latencyMs.p99} ms, ` +
      `${load.errors} errors${load.breakdown.length ? ` (${load.breakdown.join(', ')})` : ''}; lag: ${lag.lagsMs.length} positions, ${lag.unresolved} unresolved`,
  );
  return {
    tokens: options.tokens.length,
    created: load.created,
    createdPerSecond: load.createdPerSecond,
    latencyMs: report.latencyMs,
    errors: load.errors,
    lag: { ...summarize(lag.lagsMs), unresolved: lag.unresolved },
    lagsMs: lag.lagsMs,
  };
};
