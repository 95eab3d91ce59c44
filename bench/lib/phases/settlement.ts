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

export interface SettlementPhaseOptions {
  lifecycle: Lifecycle;
  service: BenchService;
  /** withdrawals queued at once on each chain (100) */
  count: number;
  blockTimeMs: number;
  progress: (message: string) => void;
}

const ETHEREUM = 'eip155:1';
const BITCOIN = 'bip122:000000000019d6689c085ae165831e93';

const nativeOf = (tokens: TokenInfo[], chainId: string): TokenInfo => {
  const token = tokens.find((candidate) => candidate.chainId === chainId && candidate.id.includes('/slip44:'));
  if (!token) throw new Error(`the devnet enables no native token on ${chainId}`);
  return token;
};

/**
 * The other half of a withdrawal's life: an organization of its own (so the load phases' backlog
 * is not in its way), funded on Ethereum and Bitcoin, queues `count` withdrawals on one chain at
 * once and waits until every one is Completed; then the same on Bitcoin. It measures what the
 * service does today: how long until all are completed against the chain's confirmation time, and
 * how many transactions paid them.
 */
export const runSettlementPhase = async (options: SettlementPhaseOptions): Promise<SettlementFigures> => {
  const { lifecycle, progress } = options;
  const org = await bootstrapWithOwnReceiver(lifecycle, options.service);
  const tokens = await listTokens(org.api);
  const evmToken = nativeOf(tokens, ETHEREUM);
  const bitcoinToken = nativeOf(tokens, BITCOIN);
  progress(`settlement: funding an organization of its own on ${evmToken.id} and ${bitcoinToken.id}`);
  await fundOrganization(lifecycle, org.api, [evmToken, bitcoinToken], progress);
  const confirmations = await chainConfirmations(org.api);
  const settle = async (api: ApiClient, token: TokenInfo): Promise<ChainSettlement> => {
    lifecycle.checkpoint();
    progress(`settlement: ${options.count} withdrawals queued at once on ${token.chainId}`);
    const [template] = withdrawalTemplates([token]);
    const settled = await settleWithdrawals(api, template!, options.count, { referencePrefix: `settlement-${Date.now().toString(36)}`, timeoutMs: 30 * 60_000, signal: lifecycle.signal });
    const confirmationMs = (confirmations.get(token.chainId) ?? 1) * options.blockTimeMs;
    progress(`settlement: ${token.chainId}: ${settled.completed} completed, ${settled.failed.length} failed, by ${settled.transactions} transactions, in ${(settled.ms / 1000).toFixed(1)} s (confirmation time ${confirmationMs} ms)`);
    return { ...settled, chainId: token.chainId, withdrawals: options.count, confirmationMs };
  };
  return { evm: await settle(org.api, evmToken), bitcoin: await settle(org.api, bitcoinToken) };
};
