import { findChain } from '../../src/catalog/registry.js';
import { faucetKey } from '../../src/chains/devnet/faucet-keys.js';
import { createApiClient, mapConcurrently, pollUntil, type ApiClient } from './api.js';
import type { Lifecycle } from './lifecycle.js';
import { runCli, type BenchService } from './service.js';
import { startBenchWebhookReceiver } from './webhook-receiver.js';

export interface BenchOrganization {
  orgId: string;
  api: ApiClient;
  webhookSigningSecret: string;
}

export interface TokenInfo {
  id: string;
  chainId: string;
  symbol: string;
  minimumAmount: string;
  properties: { minimumWithdrawal: string; maximumWithdrawal: string };
}

interface Account {
  chainId: string;
  properties: { address: string; destinationTag?: string };
}

/** what the CLI says when the organization is recorded but its projection did not show it within a minute */
const NOT_YET_VISIBLE = /not yet visible/;
const BOOTSTRAP_ATTEMPTS = 3;

/**
 * `ledgergate bootstrap` against the running server (one signer: withdrawals are approved at
 * creation). A service busy starting on a long history may not show the organization within the
 * CLI's minute: that one is left unused (its key was never printed) and another bootstrapped.
 * Without a webhook URL (null), its deliveries wait in the outbox until one is set.
 */
export const bootstrapOrganization = async (service: BenchService, webhookUrl: string | null): Promise<BenchOrganization> => {
  for (let attempt = 1; ; attempt++) {
    const suffix = `${Date.now().toString(36)}${attempt}`;
    const url = webhookUrl === null ? [] : ['--webhook-url', webhookUrl];
    const { code, stdout, stderr } = await runCli(service, ['bootstrap', '--org', `Bench ${suffix}`, '--user', `bench-${suffix}`, '--min-signers', '1', ...url, '--json']);
    if (code === 0) return bootstrapped(service, stdout);
    if (!NOT_YET_VISIBLE.test(stderr) || attempt >= BOOTSTRAP_ATTEMPTS) throw new Error(`ledgergate bootstrap exited with ${code}: ${stderr}`);
  }
};

const bootstrapped = (service: BenchService, stdout: string): BenchOrganization => {
  const created = JSON.parse(stdout) as { organization: { id: string }; apiKey: string; webhookSigningSecret: string };
  return { orgId: created.organization.id, api: createApiClient(service.url, created.apiKey), webhookSigningSecret: created.webhookSigningSecret };
};

/** An organization with a webhook receiver of its own (its secret checked there), closed at teardown: a phase's own tenant. */
export const bootstrapWithOwnReceiver = async (lifecycle: Lifecycle, service: BenchService): Promise<BenchOrganization> => {
  const receiver = await startBenchWebhookReceiver();
  lifecycle.onTeardown('close a webhook receiver', () => receiver.close());
  const org = await bootstrapOrganization(service, receiver.url);
  receiver.setSecret(org.webhookSigningSecret);
  return org;
};

/**
 * The devnet's own address on a chain: a valid external address of the right family and network,
 * used as the sender of injected deposits and as the recipient of the bench's withdrawals.
 */
export const externalAddress = (chainId: string): string => {
  const chain = findChain(chainId);
  if (!chain) throw new Error(`unknown chain ${chainId}`);
  return faucetKey(chain).address;
};

export const listTokens = async (api: ApiClient): Promise<TokenInfo[]> => (await api.expect<{ tokens: TokenInfo[] }>(200, 'GET', '/tokens')).tokens;

export const chainConfirmations = async (api: ApiClient): Promise<Map<string, number>> => {
  const { chains } = await api.expect<{ chains: { id: string; properties: { confirmations?: number } }[] }>(200, 'GET', '/chains');
  return new Map(chains.map((chain) => [chain.id, chain.properties.confirmations ?? 1]));
};

export const depositAddress = async (api: ApiClient, token: Pick<TokenInfo, 'chainId' | 'id'>, userId: string): Promise<Account> => {
  const query = new URLSearchParams({ chainId: token.chainId, tokenId: token.id, userId });
  return (await api.expect<{ address: Account }>(200, 'GET', `/payments/deposit-address?${query}`)).address;
};

export interface PlannedDeposit {
  token: Pick<TokenInfo, 'chainId' | 'id'>;
  account: Account;
  amount: bigint;
}

/** A devnet transfer from an external sender (no faucet signature: cheapest for the devnet). */
const transferBody = ({ token, account, amount }: PlannedDeposit) => ({
  chainId: token.chainId,
  tokenId: token.id,
  toAddress: account.properties.address,
  amount: amount.toString(),
  fromAddress: externalAddress(token.chainId),
  ...(account.properties.destinationTag !== undefined ? { destinationTag: account.properties.destinationTag } : {}),
});

/** One incoming transfer through the devnet; answers its hash. */
export const injectDeposit = async (api: ApiClient, token: Pick<TokenInfo, 'chainId' | 'id'>, account: Account, amount: bigint): Promise<string> =>
  (await api.expect<{ txnHash: string }>(201, 'POST', '/devnet/deposits', transferBody({ token, account, amount }))).txnHash;

/** Up to 1,000 transfers in one request (CONTRACT §8's batch), each chain's in its next block; answers their hashes in order. */
export const injectDeposits = async (api: ApiClient, deposits: readonly PlannedDeposit[]): Promise<string[]> =>
  (await api.expect<{ transfers: { txnHash: string }[] }>(201, 'POST', '/devnet/deposits', { transfers: deposits.map(transferBody) })).transfers.map((made) => made.txnHash);

/** Mines each chain's confirmations (plus one) at once, instead of waiting for the block timer. */
export const mineConfirmations = async (api: ApiClient, chainIds: Iterable<string>, confirmations: Map<string, number>) => {
  await Promise.all([...new Set(chainIds)].map((chainId) => api.expect(200, 'POST', '/devnet/blocks', { chainId, count: (confirmations.get(chainId) ?? 1) + 1 })));
};

export interface Balance {
  tokenId: string;
  available: string;
  pending: string;
}

export const portfolio = async (api: ApiClient): Promise<Balance[]> => (await api.expect<{ balances: Balance[] }>(200, 'GET', '/portfolio')).balances;

/** How many withdrawals of its smallest amount each token's balance is funded for. */
export const WITHDRAWALS_FUNDED_PER_TOKEN = 1_000_000n;

/**
 * Funds the organization for the withdrawal phases: one deposit per token to a funding user's
 * address (1,000,000 smallest withdrawals), native coin to every gas wallet (EVM, Tron: the fee
 * check of POST /withdrawals reads it), then mines the confirmations and waits for the credits.
 */
export const fundOrganization = async (lifecycle: Lifecycle, api: ApiClient, tokens: TokenInfo[], progress: (message: string) => void) => {
  const confirmations = await chainConfirmations(api);
  const funded = tokens.map((token) => ({ token, amount: BigInt(token.properties.minimumWithdrawal) * WITHDRAWALS_FUNDED_PER_TOKEN }));
  await mapConcurrently(funded, 8, async ({ token, amount }) => injectDeposit(api, token, await depositAddress(api, token, 'bench-funding'), amount));
  const { gasWallets } = await api.expect<{ gasWallets: { chainId: string; address: string }[] }>(200, 'GET', '/gas-station');
  await mapConcurrently(gasWallets, 8, async (wallet) => {
    const native = tokens.find((token) => token.chainId === wallet.chainId && token.id.includes('/slip44:'));
    if (!native) return;
    await injectDeposit(api, native, { chainId: wallet.chainId, properties: { address: wallet.address } }, BigInt(native.properties.maximumWithdrawal));
  });
  await mineConfirmations(api, tokens.map((token) => token.chainId), confirmations);
  progress(`funding ${tokens.length} tokens: waiting for the credits`);
  let short: string[] = [];
  await pollUntil(
    'the funding deposits to be credited',
    async () => {
      const balances = new Map((await portfolio(api)).map((balance) => [balance.tokenId, balance]));
      // sweeps charge their network fees to the ledger as soon as the deposit is credited: 99% is credited
      short = funded
        .filter(({ token, amount }) => BigInt(balances.get(token.id)?.available ?? '0') * 100n < amount * 99n)
        .map(({ token }) => `${token.id} (available ${balances.get(token.id)?.available ?? 0}, pending ${balances.get(token.id)?.pending ?? 0})`);
      return short.length === 0;
    },
    { timeoutMs: 120_000, intervalMs: 250, signal: lifecycle.signal },
  ).catch((error: Error) => {
    throw new Error(`${error.message}; not credited: ${short.join('; ')}`);
  });
};
