import type { ApiClient } from '../api.js';
import type { Lifecycle } from '../lifecycle.js';
import { bootstrapWithOwnReceiver, chainConfirmations, fundOrganization, listTokens, type TokenInfo } from '../organization.js';
import type { BenchService } from '../service.js';
import { settleWithdrawals, type SettledWithdrawals } from '../settled-withdrawals.js';
import { withdrawalTemplates } from './withdrawals.js';

export interface ChainSettlement extends SettledWithdrawals {
  chainId: string;
  withdrawals: number;
  /** the chain's confirmations × the devnet's block time: how long one transaction takes to be final */
  confirmationMs: number;
}

export interface SettlementFigures {
  evm: ChainSettlement;
  bitcoin: ChainSettlement;
}

export interface ChainSettlementOptions {
  lifecycle: Lifecycle;
  api: ApiClient;
  /** the chain's native coin, funded (fundOrganization) */
  token: TokenInfo;
  /** withdrawals queued at once */
  count: number;
  blockTimeMs: number;
  timeoutMs: number;
  progress: (message: string) => void;
  /** called once the warm-up is done, right before the measured withdrawals are requested (a bench's counters start there) */
  beforeQueueing?: () => Promise<void>;
}

/** The devnet's native coin of a chain. */
export const nativeTokenOf = (tokens: TokenInfo[], chainId: string): TokenInfo => {
  const token = tokens.find((candidate) => candidate.chainId === chainId && candidate.id.includes('/slip44:'));
  if (!token) throw new Error(`the devnet enables no native token on ${chainId}`);
  return token;
};

/**
 * `count` withdrawals queued at once on one chain by one organization, from the first POST to the
 * last Completed, beside the chain's confirmation time. One withdrawal is completed first, outside
 * the clock (the deposit swept, the settlement wallet ready), as an organization in business is.
 */
export const measureChainSettlement = async (options: ChainSettlementOptions): Promise<ChainSettlement> => {
  const { lifecycle, api, token, progress } = options;
  const confirmationMs = ((await chainConfirmations(api)).get(token.chainId) ?? 1) * options.blockTimeMs;
  const [template] = withdrawalTemplates([token]);
  const settle = (count: number, referencePrefix: string) => settleWithdrawals(api, template!, count, { referencePrefix, timeoutMs: options.timeoutMs, signal: lifecycle.signal });
  progress(`settlement: ${token.chainId}: one withdrawal first (the deposit swept, the settlement wallet ready)`);
  const warmUp = await settle(1, `settlement-warm-up-${Date.now().toString(36)}`);
  if (warmUp.failed.length) throw new Error(`the warm-up withdrawal on ${token.chainId} ended ${warmUp.failed[0]}`);
  progress(`settlement: ${token.chainId}: ${options.count} withdrawals queued at once`);
  lifecycle.checkpoint();
  await options.beforeQueueing?.();
  const settled = await settle(options.count, `settlement-${Date.now().toString(36)}`);
  progress(
    `settlement: ${token.chainId}: ${settled.completed} completed, ${settled.failed.length} failed, by ${settled.transactions} transactions; ` +
      `first after ${(settled.firstMs / 1000).toFixed(1)} s, all after ${(settled.ms / 1000).toFixed(1)} s (confirmation time ${confirmationMs} ms)`,
  );
  return { ...settled, chainId: token.chainId, withdrawals: options.count, confirmationMs };
};

export interface SettlementPhaseOptions {
  lifecycle: Lifecycle;
  service: BenchService;
  count: number;
  blockTimeMs: number;
  progress: (message: string) => void;
}

const ETHEREUM = 'eip155:1';
const BITCOIN = 'bip122:000000000019d6689c085ae165831e93';

/**
 * The issue's settlement rows: an organization of its own (so the load phases' backlog is not in
 * its way), funded on Ethereum and Bitcoin, settles `count` withdrawals queued at once on each.
 * It measures what the service does when run: how long until all are completed, and how many
 * transactions paid them.
 */
export const runSettlementPhase = async (options: SettlementPhaseOptions): Promise<SettlementFigures> => {
  const { lifecycle, progress } = options;
  const org = await bootstrapWithOwnReceiver(lifecycle, options.service);
  const tokens = await listTokens(org.api);
  const [evmToken, bitcoinToken] = [nativeTokenOf(tokens, ETHEREUM), nativeTokenOf(tokens, BITCOIN)];
  progress(`settlement: funding an organization of its own on ${evmToken.id} and ${bitcoinToken.id}`);
  await fundOrganization(lifecycle, org.api, [evmToken, bitcoinToken], progress);
  const measure = (token: TokenInfo) => measureChainSettlement({ lifecycle, api: org.api, token, count: options.count, blockTimeMs: options.blockTimeMs, timeoutMs: 30 * 60_000, progress });
  return { evm: await measure(evmToken), bitcoin: await measure(bitcoinToken) };
};
