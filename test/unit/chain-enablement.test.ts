import { describe, expect, it } from 'vitest';
import { chainAvailability } from '../../src/chains/chain-availability.js';
import { checkChainAndToken, listChains, listTokens, type OrganizationChainSettings } from '../../src/application/chain-enablement.js';
import { CHAINS, supportedChainIds } from '../../src/catalog/registry.js';
import { TOKENS } from '../../src/catalog/tokens.js';
import { DomainError } from '../../src/errors.js';

const ETH = 'eip155:1/slip44:60';
const USDT = 'eip155:1/erc20:0xdac17f958d2ee523a2206206994597c13d831ec7';
const POLYGON_USDT = 'eip155:137/erc20:0xc2132d05d31c914a87c6611c10748aeb04b58e8f';

const org = (switches: Partial<OrganizationChainSettings> = {}): OrganizationChainSettings => ({
  availability: chainAvailability({ isProduction: false }),
  disabledChainIds: [],
  disabledTokenIds: [],
  ...switches,
});

const refusal = (settings: OrganizationChainSettings, chainId: string, tokenId: string) => {
  try {
    checkChainAndToken(settings, chainId, tokenId);
  } catch (error) {
    if (error instanceof DomainError) return { code: error.code, message: error.message, details: error.details };
    throw error;
  }
  return null;
};

describe('chain availability', () => {
  it('runs every supported chain outside production (the devnet), none in production yet, and never an unknown one', () => {
    const development = chainAvailability({ isProduction: false });
    const production = chainAvailability({ isProduction: true });
    expect(CHAINS.every((chain) => development.isChainRunning(chain.id))).toBe(true);
    expect(CHAINS.some((chain) => production.isChainRunning(chain.id))).toBe(false);
    expect(development.isChainRunning('eip155:2')).toBe(false);
  });
});

describe('checkChainAndToken', () => {
  it('answers the chain and the token when both are enabled', () => {
    const { chain, token } = checkChainAndToken(org(), 'eip155:1', USDT);
    expect(chain.id).toBe('eip155:1');
    expect(token.symbol).toBe('USDT');
  });

  it('refuses in SPEC’s order: INVALID_CHAIN before CHAIN_NOT_ENABLED before INVALID_TOKEN before INVALID_TOKEN_CHAIN before TOKEN_NOT_ENABLED', () => {
    // everything wrong at once: the chain id decides
    const allWrong = org({ disabledChainIds: ['eip155:1'], disabledTokenIds: [USDT] });
    expect(refusal(allWrong, 'eip155:2', 'nope')).toEqual({
      code: 'INVALID_CHAIN',
      message: 'chain eip155:2 is not supported',
      details: { providedChainId: 'eip155:2', supportedChains: supportedChainIds() },
    });
    expect(refusal(allWrong, 'eip155:1', 'nope')).toEqual({
      code: 'CHAIN_NOT_ENABLED',
      message: 'chain eip155:1 (Ethereum) is disabled for this organization',
      details: { chainId: 'eip155:1' },
    });
    const tokenWrong = org({ disabledTokenIds: [USDT] });
    expect(refusal(tokenWrong, 'eip155:1', 'nope')).toEqual({
      code: 'INVALID_TOKEN',
      message: '"nope" is not a CAIP-19 token id (<chainId>/<asset_namespace>:<asset_reference>)',
      details: { providedTokenId: 'nope' },
    });
    expect(refusal(tokenWrong, 'eip155:1', POLYGON_USDT)).toEqual({
      code: 'INVALID_TOKEN_CHAIN',
      message: `token ${POLYGON_USDT} is on chain eip155:137, not on eip155:1`,
      details: { tokenId: POLYGON_USDT, tokenChainId: 'eip155:137', chainId: 'eip155:1' },
    });
    expect(refusal(tokenWrong, 'eip155:1', USDT)).toEqual({
      code: 'TOKEN_NOT_ENABLED',
      message: `token ${USDT} (USDT) is disabled for this organization`,
      details: { tokenId: USDT },
    });
    expect(refusal(tokenWrong, 'eip155:1', ETH)).toBeNull();
  });

  it('names a malformed chain id as such', () => {
    expect(refusal(org(), 'ethereum', ETH)?.message).toBe('"ethereum" is not a CAIP-2 chain id (<namespace>:<reference>)');
  });

  it('says CHAIN_NOT_ENABLED when the chain does not run on the service (production without chain configuration)', () => {
    expect(refusal(org({ availability: chainAvailability({ isProduction: true }) }), 'eip155:1', ETH)).toEqual({
      code: 'CHAIN_NOT_ENABLED',
      message: 'chain eip155:1 (Ethereum) is not running on this service',
      details: { chainId: 'eip155:1' },
    });
  });
});

describe('listing for an organization', () => {
  it('filters chains and tokens by enabledOnly; a disabled chain disables its tokens', () => {
    const settings = org({ disabledChainIds: ['xrpl:mainnet'], disabledTokenIds: [USDT] });
    expect(listChains(settings, { enabledOnly: false })).toHaveLength(11);
    expect(listChains(settings, { enabledOnly: true }).map((chain) => chain.id)).toEqual(supportedChainIds().filter((id) => id !== 'xrpl:mainnet'));
    const enabledTokens = listTokens(settings, { enabledOnly: true }).map((token) => token.id);
    expect(enabledTokens).toEqual(TOKENS.map((token) => token.id).filter((id) => id !== USDT && id !== 'xrpl:mainnet/slip44:144'));
    expect(listTokens(settings, { chainId: 'xrpl:mainnet', enabledOnly: false })).toMatchObject([{ id: 'xrpl:mainnet/slip44:144', enabled: false }]);
  });
});
