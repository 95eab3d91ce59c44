import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setChainEnabled, setTokenEnabled } from '../../src/application/chain-switches.js';
import { waitForProjection } from '../../src/application/projection-waiter.js';
import { parseTokenId } from '../../src/catalog/caip.js';
import { ORGANIZATIONS_PROJECTION } from '../../src/projections/organizations.js';
import { startTestService, type TestService } from '../support/api-harness.js';

/** SPEC §2.1's table, with the chain properties CONTRACT §6 adds. */
const SPEC_CHAINS = [
  { id: 'eip155:1', name: 'Ethereum', namespace: 'eip155', reference: '1', isTestnet: false, properties: { nativeCurrency: 'ETH', decimals: 18, confirmations: 12 } },
  { id: 'eip155:137', name: 'Polygon', namespace: 'eip155', reference: '137', isTestnet: false, properties: { nativeCurrency: 'POL', decimals: 18, confirmations: 64 } },
  { id: 'eip155:56', name: 'BSC', namespace: 'eip155', reference: '56', isTestnet: false, properties: { nativeCurrency: 'BNB', decimals: 18, confirmations: 15 } },
  {
    id: 'bip122:000000000019d6689c085ae165831e93',
    name: 'Bitcoin',
    namespace: 'bip122',
    reference: '000000000019d6689c085ae165831e93',
    isTestnet: false,
    properties: { nativeCurrency: 'BTC', decimals: 8, confirmations: 2 },
  },
  {
    id: 'tron:0x00000000000000000000000000000000',
    name: 'Tron',
    namespace: 'tron',
    reference: '0x00000000000000000000000000000000',
    isTestnet: false,
    properties: { nativeCurrency: 'TRX', decimals: 6, confirmations: 19 },
  },
  { id: 'xrpl:mainnet', name: 'XRP', namespace: 'xrpl', reference: 'mainnet', isTestnet: false, properties: { nativeCurrency: 'XRP', decimals: 6, confirmations: 1 } },
  {
    id: 'eip155:11155111',
    name: 'Ethereum Sepolia',
    namespace: 'eip155',
    reference: '11155111',
    isTestnet: true,
    properties: { nativeCurrency: 'ETH', decimals: 18, confirmations: 6 },
  },
  { id: 'eip155:97', name: 'BSC Testnet', namespace: 'eip155', reference: '97', isTestnet: true, properties: { nativeCurrency: 'tBNB', decimals: 18, confirmations: 6 } },
  {
    id: 'bip122:000000000933ea01ad0ee984209779ba',
    name: 'Bitcoin Testnet',
    namespace: 'bip122',
    reference: '000000000933ea01ad0ee984209779ba',
    isTestnet: true,
    properties: { nativeCurrency: 'tBTC', decimals: 8, confirmations: 1 },
  },
  { id: 'tron:shasta', name: 'Tron Shasta', namespace: 'tron', reference: 'shasta', isTestnet: true, properties: { nativeCurrency: 'TRX', decimals: 6, confirmations: 5 } },
  { id: 'xrpl:testnet', name: 'XRP Testnet', namespace: 'xrpl', reference: 'testnet', isTestnet: true, properties: { nativeCurrency: 'XRP', decimals: 6, confirmations: 1 } },
];
const SUPPORTED = SPEC_CHAINS.map((chain) => chain.id);

/** SPEC §2.1: native asset ids. */
const SPEC_NATIVE_IDS = [
  'eip155:1/slip44:60',
  'eip155:137/slip44:60',
  'eip155:56/slip44:60',
  'bip122:000000000019d6689c085ae165831e93/slip44:0',
  'tron:0x00000000000000000000000000000000/slip44:195',
  'xrpl:mainnet/slip44:144',
  'eip155:11155111/slip44:60',
  'eip155:97/slip44:60',
  'bip122:000000000933ea01ad0ee984209779ba/slip44:0',
  'tron:shasta/slip44:195',
  'xrpl:testnet/slip44:144',
];

const ETH_USDT = 'eip155:1/erc20:0xdac17f958d2ee523a2206206994597c13d831ec7';
const POLYGON = 'eip155:137';

const invalidChain = (providedChainId: string, message: string) => ({
  status: 422,
  body: { error: 'INVALID_CHAIN', message, statusCode: 422, details: { providedChainId, supportedChains: SUPPORTED } },
});

describe('chains and tokens over HTTP (SPEC §2.5–2.7, §4.3)', () => {
  let service: TestService;
  let acme: { apiKey: string; orgId: string };
  let globex: { apiKey: string; orgId: string };

  const get = (path: string, apiKey = acme.apiKey) => service.request('GET', path, { apiKey });
  const depositAddress = (chainId: string, tokenId: string) =>
    get(`/payments/deposit-address?${new URLSearchParams({ chainId, tokenId, userId: 'user-1' })}`);

  /** what `ledgergate chains|tokens enable|disable` runs, visible to the API when it returns */
  const switchChain = async (orgId: string, chainId: string, enabled: boolean) => {
    const { position } = await setChainEnabled(service.services, orgId, chainId, enabled, { actor: 'test', orgId });
    if (position !== null) await waitForProjection(service.infrastructure.db, ORGANIZATIONS_PROJECTION, position);
  };
  const switchToken = async (orgId: string, tokenId: string, enabled: boolean) => {
    const { position } = await setTokenEnabled(service.services, orgId, tokenId, enabled, { actor: 'test', orgId });
    if (position !== null) await waitForProjection(service.infrastructure.db, ORGANIZATIONS_PROJECTION, position);
  };

  beforeAll(async () => {
    service = await startTestService({ DEVNET_BLOCK_TIME_MS: '3600000' });
    const a = await service.bootstrap('Acme', ['alice']);
    const g = await service.bootstrap('Globex', ['gina']);
    acme = { apiKey: a.apiKey, orgId: a.organization.id };
    globex = { apiKey: g.apiKey, orgId: g.organization.id };
  });
  afterAll(async () => service.stop());

  it('lists exactly SPEC’s 11 chains, all enabled on the devnet', async () => {
    const all = await get('/chains?enabledOnly=false');
    expect(all).toMatchObject({ status: 200 });
    expect(all.body).toEqual({ chains: SPEC_CHAINS.map((chain) => ({ ...chain, enabled: true })) });
    expect((await get('/chains')).body).toEqual(all.body); // enabledOnly defaults to true
  });

  it('accepts only "true" and "false" for enabledOnly', async () => {
    for (const value of ['yes', '1', 'TRUE', '']) {
      const response = await get(`/chains?enabledOnly=${value}`);
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ error: 'BAD_REQUEST', statusCode: 400, details: { issues: [{ path: 'enabledOnly' }] } });
    }
    expect((await get('/tokens?enabledOnly=no')).status).toBe(400);
  });

  it('answers one chain by its CAIP-2 id, with the colon raw or URL-encoded', async () => {
    const expected = { status: 200, body: { chain: { ...SPEC_CHAINS[5], enabled: true } } };
    expect(await get('/chains/xrpl:mainnet')).toMatchObject(expected);
    expect(await get('/chains/xrpl%3Amainnet')).toMatchObject(expected);
    expect((await get('/chains/bip122%3A000000000019d6689c085ae165831e93')).body).toEqual({ chain: { ...SPEC_CHAINS[3], enabled: true } });
  });

  it('refuses an unsupported or malformed chain id with 422 INVALID_CHAIN, the id given and the supported ones', async () => {
    expect(await get('/chains/eip155:2')).toMatchObject(invalidChain('eip155:2', 'chain eip155:2 is not supported'));
    expect(await get('/chains/ethereum')).toMatchObject(invalidChain('ethereum', '"ethereum" is not a CAIP-2 chain id (<namespace>:<reference>)'));
    expect((await get('/chains/eip155:2')).body).toEqual(invalidChain('eip155:2', 'chain eip155:2 is not supported').body);
    expect(await get('/tokens?chainId=eip155%3A2')).toMatchObject(invalidChain('eip155:2', 'chain eip155:2 is not supported'));
  });

  it('lists tokens with valid CAIP-19 ids, SPEC’s native ids, and SPEC §2.6’s fields', async () => {
    const { status, body } = await get('/tokens?enabledOnly=false');
    expect(status).toBe(200);
    const tokens = body!.tokens as Record<string, unknown>[];
    for (const token of tokens) {
      expect(Object.keys(token).sort()).toEqual(['address', 'chainId', 'decimals', 'enabled', 'id', 'minimumAmount', 'name', 'properties', 'symbol']);
      expect(parseTokenId(token.id as string)?.chainId).toBe(token.chainId);
      expect(SUPPORTED).toContain(token.chainId);
    }
    expect(tokens.filter((token) => /\/slip44:/.test(token.id as string)).map((token) => token.id)).toEqual(SPEC_NATIVE_IDS);
    expect(tokens.find((token) => token.id === ETH_USDT)).toEqual({
      id: ETH_USDT,
      chainId: 'eip155:1',
      name: 'Tether USD',
      symbol: 'USDT',
      decimals: 6,
      address: '0xdAC17F958D2ee523a2206206994597C13D831ec7',
      enabled: true,
      minimumAmount: '1000000',
      properties: { minimumWithdrawal: '1000000', maximumWithdrawal: '1000000000000' },
    });
  });

  it('filters tokens by chain', async () => {
    const { body } = await get('/tokens?chainId=eip155:1');
    expect((body!.tokens as { id: string }[]).map((token) => token.id)).toEqual([
      'eip155:1/slip44:60',
      ETH_USDT,
      'eip155:1/erc20:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48',
    ]);
    expect((await get('/tokens?chainId=xrpl:testnet')).body).toEqual({
      tokens: [
        {
          id: 'xrpl:testnet/slip44:144',
          chainId: 'xrpl:testnet',
          name: 'XRP',
          symbol: 'XRP',
          decimals: 6,
          address: '',
          enabled: true,
          minimumAmount: '100000',
          properties: { minimumWithdrawal: '1000000', maximumWithdrawal: '10000000000000' },
        },
      ],
    });
  });

  it('needs credentials', async () => {
    for (const path of ['/chains', '/chains/eip155:1', '/tokens']) {
      expect(await service.request('GET', path)).toMatchObject({ status: 401, body: { error: 'UNAUTHORIZED', statusCode: 401 } });
    }
  });

  it('answers a deposit address for an enabled chain and token', async () => {
    const response = await depositAddress('eip155:1', ETH_USDT);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ address: { chainId: 'eip155:1', externalUserId: 'user-1', orgId: acme.orgId } });
  });

  it('refuses deposit addresses with each chain and token error, in SPEC’s order', async () => {
    expect(await depositAddress('eip155:2', ETH_USDT)).toEqual(
      expect.objectContaining(invalidChain('eip155:2', 'chain eip155:2 is not supported')),
    );
    expect(await depositAddress('eip155:1', 'eip155:1/erc20:0x0000000000000000000000000000000000000001')).toMatchObject({
      status: 422,
      body: {
        error: 'INVALID_TOKEN',
        message: 'token eip155:1/erc20:0x0000000000000000000000000000000000000001 is not supported',
        statusCode: 422,
        details: { providedTokenId: 'eip155:1/erc20:0x0000000000000000000000000000000000000001' },
      },
    });
    expect((await depositAddress('eip155:1', 'usdt')).body).toEqual({
      error: 'INVALID_TOKEN',
      message: '"usdt" is not a CAIP-19 token id (<chainId>/<asset_namespace>:<asset_reference>)',
      statusCode: 422,
      details: { providedTokenId: 'usdt' },
    });
    expect(await depositAddress('eip155:1', 'eip155:56/slip44:60')).toMatchObject({
      status: 422,
      body: {
        error: 'INVALID_TOKEN_CHAIN',
        message: 'token eip155:56/slip44:60 is on chain eip155:56, not on eip155:1',
        statusCode: 422,
        details: { tokenId: 'eip155:56/slip44:60', tokenChainId: 'eip155:56', chainId: 'eip155:1' },
      },
    });
  });

  it('keeps the JWT’s INVALID_TOKEN at 401 beside the token id’s 422', async () => {
    expect(await service.request('GET', '/chains', { token: 'not.a.jwt' })).toMatchObject({
      status: 401,
      body: { error: 'INVALID_TOKEN', statusCode: 401 },
    });
  });

  it('lets one organization switch a chain off without touching another’s', async () => {
    await switchChain(acme.orgId, POLYGON, false);

    expect(((await get('/chains')).body!.chains as { id: string }[]).map((chain) => chain.id)).toEqual(SUPPORTED.filter((id) => id !== POLYGON));
    expect((await get('/chains?enabledOnly=false')).body).toEqual({
      chains: SPEC_CHAINS.map((chain) => ({ ...chain, enabled: chain.id !== POLYGON })),
    });
    expect((await get(`/chains/${POLYGON}`)).body).toEqual({ chain: { ...SPEC_CHAINS[1], enabled: false } });
    // a disabled chain disables its tokens
    expect((await get(`/tokens?chainId=${POLYGON}`)).body).toEqual({ tokens: [] });
    expect(((await get(`/tokens?chainId=${POLYGON}&enabledOnly=false`)).body!.tokens as { enabled: boolean }[]).map((token) => token.enabled)).toEqual([
      false,
      false,
      false,
    ]);
    expect(await depositAddress(POLYGON, 'eip155:137/slip44:60')).toMatchObject({
      status: 422,
      body: { error: 'CHAIN_NOT_ENABLED', message: 'chain eip155:137 (Polygon) is disabled for this organization', statusCode: 422, details: { chainId: POLYGON } },
    });
    // CHAIN_NOT_ENABLED comes before any token error
    expect((await depositAddress(POLYGON, 'usdt')).body).toMatchObject({ error: 'CHAIN_NOT_ENABLED' });

    // the other organization still has it
    expect((await get(`/chains/${POLYGON}`, globex.apiKey)).body).toEqual({ chain: { ...SPEC_CHAINS[1], enabled: true } });
    expect((await get('/chains', globex.apiKey)).body).toEqual({ chains: SPEC_CHAINS.map((chain) => ({ ...chain, enabled: true })) });

    await switchChain(acme.orgId, POLYGON, true);
    expect((await get(`/chains/${POLYGON}`)).body).toEqual({ chain: { ...SPEC_CHAINS[1], enabled: true } });
    expect((await depositAddress(POLYGON, 'eip155:137/slip44:60')).status).toBe(200);
  });

  it('lets one organization switch a token off: TOKEN_NOT_ENABLED, and the list filters it', async () => {
    await switchToken(acme.orgId, ETH_USDT, false);

    expect(await depositAddress('eip155:1', ETH_USDT)).toMatchObject({
      status: 422,
      body: { error: 'TOKEN_NOT_ENABLED', message: `token ${ETH_USDT} (USDT) is disabled for this organization`, statusCode: 422, details: { tokenId: ETH_USDT } },
    });
    // the chain and its other tokens stay enabled
    expect((await depositAddress('eip155:1', 'eip155:1/slip44:60')).status).toBe(200);
    expect(((await get('/tokens?chainId=eip155:1')).body!.tokens as { id: string }[]).map((token) => token.id)).toEqual([
      'eip155:1/slip44:60',
      'eip155:1/erc20:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48',
    ]);
    expect(((await get('/tokens?chainId=eip155:1&enabledOnly=false')).body!.tokens as { id: string; enabled: boolean }[]).find((token) => token.id === ETH_USDT)?.enabled).toBe(false);
    expect(((await get('/tokens?chainId=eip155:1', globex.apiKey)).body!.tokens as { id: string }[]).map((token) => token.id)).toContain(ETH_USDT);

    await switchToken(acme.orgId, ETH_USDT, true);
    expect((await depositAddress('eip155:1', ETH_USDT)).status).toBe(200);
  });
});
