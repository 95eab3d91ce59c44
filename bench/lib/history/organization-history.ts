import { findChain } from '../../../src/catalog/registry.js';
import { nativeToken, tokensOfChain, type TokenDefinition } from '../../../src/catalog/tokens.js';
import type { ChainDefinition } from '../../../src/catalog/chain.js';
import type { SpentOutput } from '../../../src/domain/withdrawal/withdrawal.js';
import type { HistoryContext, Steps } from './context.js';
import { depositLifecycle } from './deposits.js';
import { bootstrapOrganization } from './organization.js';
import { withdrawalLifecycle, type WithdrawalOutcome } from './withdrawals.js';

const chainOf = (chainId: string): ChainDefinition => findChain(chainId)!;
const ETHEREUM = chainOf('eip155:1');
const BITCOIN = chainOf('bip122:000000000019d6689c085ae165831e93');

interface Asset {
  chain: ChainDefinition;
  token: TokenDefinition;
  /** a deposit's size, base units (varied a little per deposit) */
  deposit: bigint;
}

/** What the history's organizations hold and move: ETH and USDC on Ethereum, BTC. */
export const HISTORY_ASSETS = {
  eth: { chain: ETHEREUM, token: nativeToken(ETHEREUM.id), deposit: 250_000_000_000_000_000n },
  usdc: { chain: ETHEREUM, token: tokensOfChain(ETHEREUM.id).find((token) => token.symbol === 'USDC')!, deposit: 500_000_000n },
  btc: { chain: BITCOIN, token: nativeToken(BITCOIN.id), deposit: 5_000_000n },
} satisfies Record<string, Asset>;

/** the key spaces the history hands out indexes in (their counters are read first: a store may have some already) */
export const HISTORY_KEY_SPACES = [...new Set(Object.values(HISTORY_ASSETS).map(({ chain }) => chain.keySpace))];

type Activity = { deposit: keyof typeof HISTORY_ASSETS } | { withdraw: keyof typeof HISTORY_ASSETS; outcome: WithdrawalOutcome };

/**
 * An organization's round of business, repeated: deposits of each asset from its customers, and
 * withdrawals that mostly complete, a few that fail on chain and a few cancelled. About 100 events
 * a round; the deposits come first, so every withdrawal has a balance to hold.
 */
const ROUND: Activity[] = [
  { deposit: 'eth' },
  { deposit: 'usdc' },
  { deposit: 'btc' },
  { withdraw: 'eth', outcome: 'completed' },
  { deposit: 'usdc' },
  { withdraw: 'usdc', outcome: 'completed' },
  { withdraw: 'btc', outcome: 'completed' },
  { deposit: 'eth' },
  { withdraw: 'eth', outcome: 'failed' },
  { withdraw: 'usdc', outcome: 'cancelled' },
  { deposit: 'btc' },
  { withdraw: 'eth', outcome: 'completed' },
];

/**
 * depositors per organization: each gets an account per chain on their first deposit there (an
 * address derivation each, ~1.5 ms of elliptic-curve work on this machine: the fill's main CPU cost)
 */
const CUSTOMERS = 12;

/**
 * One organization's whole history, one step at a time: bootstrapped, then round after round of
 * activities until the fill says stop (the activity under way is finished first: the history leaves
 * nothing in flight for the service's processes to pick up).
 */
export function* organizationHistory(context: HistoryContext, ordinal: number, runId: string): Steps {
  const organization = yield* bootstrapOrganization(context, ordinal, runId);
  const bitcoinOutputs: SpentOutput[] = [];
  for (let n = 0; !context.stopping; n++) {
    const activity = ROUND[n % ROUND.length]!;
    const vary = BigInt((ordinal * 7919 + n * 104_729) % 1000);
    if ('deposit' in activity) {
      const { chain, token, deposit } = HISTORY_ASSETS[activity.deposit];
      const amount = deposit + (deposit / 1000n) * vary;
      const customer = `customer-${(ordinal + n) % CUSTOMERS}`;
      const ref = yield* depositLifecycle(context, organization, chain, token, customer, amount);
      const account = organization.accounts.get(chain.id)!.get(customer)!;
      if (chain.family === 'bitcoin') bitcoinOutputs.push({ txHash: ref.txHash, index: ref.index, address: account.properties.address, amount: amount.toString() });
      continue;
    }
    const { chain, token, deposit } = HISTORY_ASSETS[activity.withdraw];
    const amount = deposit / 10n + vary;
    if (context.book.available(organization.orgId, token.id) < amount * 2n) continue;
    yield* withdrawalLifecycle(context, organization, chain, token, amount, activity.outcome, chain.family === 'bitcoin' ? bitcoinOutputs.splice(0, 1) : []);
  }
}
