import type { Kysely } from 'kysely';
import type { Database } from '../db/database.js';
import { DomainError } from '../errors.js';
import type { ChainAvailability } from '../chains/chain-availability.js';
import { requireKnownToken, requireSupportedChain } from '../catalog/caip.js';
import type { ChainDefinition } from '../catalog/chain.js';
import { CHAINS } from '../catalog/registry.js';
import { TOKENS, type TokenDefinition } from '../catalog/tokens.js';

/** What decides, for one organization, whether a chain or token is enabled. */
export interface OrganizationChainSettings {
  availability: ChainAvailability;
  /** CAIP-2 ids the organization switched off */
  disabledChainIds: readonly string[];
  /** CAIP-19 ids (the catalog's) the organization switched off */
  disabledTokenIds: readonly string[];
}

/** The organization's switches as the `organizations` read model holds them. */
export const loadChainSettings = async (db: Kysely<Database>, availability: ChainAvailability, orgId: string): Promise<OrganizationChainSettings> => {
  const row = await db.selectFrom('organizations').select(['disabled_chain_ids', 'disabled_token_ids']).where('id', '=', orgId).executeTakeFirst();
  return { availability, disabledChainIds: row?.disabled_chain_ids ?? [], disabledTokenIds: row?.disabled_token_ids ?? [] };
};

/** SPEC §2.5: running service-wide and not switched off by the organization. */
export const isChainEnabled = (org: OrganizationChainSettings, chainId: string): boolean =>
  org.availability.isChainRunning(chainId) && !org.disabledChainIds.includes(chainId);

/** SPEC §2.6: its chain enabled and the token not switched off. */
export const isTokenEnabled = (org: OrganizationChainSettings, token: TokenDefinition): boolean =>
  isChainEnabled(org, token.chainId) && !org.disabledTokenIds.includes(token.id);

const chainNotEnabled = (org: OrganizationChainSettings, chain: ChainDefinition) =>
  new DomainError(
    'CHAIN_NOT_ENABLED',
    org.availability.isChainRunning(chain.id)
      ? `chain ${chain.id} (${chain.name}) is disabled for this organization`
      : `chain ${chain.id} (${chain.name}) is not running on this service`,
    { chainId: chain.id },
  );

/**
 * The chain and token a deposit address or withdrawal names, checked in SPEC's order:
 * INVALID_CHAIN → CHAIN_NOT_ENABLED → INVALID_TOKEN → INVALID_TOKEN_CHAIN → TOKEN_NOT_ENABLED.
 */
export const checkChainAndToken = (
  org: OrganizationChainSettings,
  chainId: string,
  tokenId: string,
): { chain: ChainDefinition; token: TokenDefinition } => {
  const chain = requireSupportedChain(chainId);
  if (!isChainEnabled(org, chain.id)) throw chainNotEnabled(org, chain);
  const token = requireKnownToken(tokenId);
  if (token.chainId !== chain.id) {
    throw new DomainError('INVALID_TOKEN_CHAIN', `token ${token.id} is on chain ${token.chainId}, not on ${chain.id}`, {
      tokenId: token.id,
      tokenChainId: token.chainId,
      chainId: chain.id,
    });
  }
  if (!isTokenEnabled(org, token)) {
    throw new DomainError('TOKEN_NOT_ENABLED', `token ${token.id} (${token.symbol}) is disabled for this organization`, { tokenId: token.id });
  }
  return { chain, token };
};

/** SPEC §2.5's chain as this organization sees it. */
export const chainView = (org: OrganizationChainSettings, chain: ChainDefinition) => ({
  id: chain.id,
  name: chain.name,
  namespace: chain.namespace,
  reference: chain.reference,
  enabled: isChainEnabled(org, chain.id),
  isTestnet: chain.isTestnet,
  // the confirmations the service waits for (CHAINS_CONFIG may override the registry's)
  properties: { ...(org.availability.definitionOf?.(chain) ?? chain).properties },
});

/** SPEC §2.6's token as this organization sees it. */
export const tokenView = (org: OrganizationChainSettings, token: TokenDefinition) => ({
  id: token.id,
  chainId: token.chainId,
  name: token.name,
  symbol: token.symbol,
  decimals: token.decimals,
  address: token.address,
  enabled: isTokenEnabled(org, token),
  minimumAmount: token.minimumAmount,
  properties: { ...token.properties },
});

export const listChains = (org: OrganizationChainSettings, { enabledOnly }: { enabledOnly: boolean }) =>
  CHAINS.map((chain) => chainView(org, chain)).filter((chain) => !enabledOnly || chain.enabled);

/** Every token, or those of one chain (INVALID_CHAIN for an unsupported chain id). */
export const listTokens = (org: OrganizationChainSettings, { chainId, enabledOnly }: { chainId?: string; enabledOnly: boolean }) => {
  const chain = chainId === undefined ? undefined : requireSupportedChain(chainId);
  return TOKENS.filter((token) => chain === undefined || token.chainId === chain.id)
    .map((token) => tokenView(org, token))
    .filter((token) => !enabledOnly || token.enabled);
};

/** checkChainAndToken for an organization by id, its switches read from the read model (deposit addresses, withdrawals). */
export const chainAndTokenChecker =
  (db: Kysely<Database>, availability: ChainAvailability) =>
  async (orgId: string, chainId: string, tokenId: string): Promise<{ chain: ChainDefinition; token: TokenDefinition }> =>
    checkChainAndToken(await loadChainSettings(db, availability, orgId), chainId, tokenId);
