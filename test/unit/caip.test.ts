import { getAddress } from 'ethers';
import { TronWeb } from 'tronweb';
import { describe, expect, it } from 'vitest';
import { parseChainId, parseTokenId, requireKnownToken, requireSupportedChain } from '../../src/catalog/caip.js';
import { CHAINS, supportedChainIds } from '../../src/catalog/registry.js';
import { findToken, nativeToken, TOKENS, tokensOfChain } from '../../src/catalog/tokens.js';
import { DomainError } from '../../src/errors.js';

const thrown = (run: () => unknown): DomainError => {
  try {
    run();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('nothing was thrown');
};

describe('CAIP-2 chain ids', () => {
  it.each([
    ['eip155:1', 'eip155', '1'],
    ['bip122:000000000019d6689c085ae165831e93', 'bip122', '000000000019d6689c085ae165831e93'],
    ['tron:0x00000000000000000000000000000000', 'tron', '0x00000000000000000000000000000000'],
    ['xrpl:mainnet', 'xrpl', 'mainnet'],
    ['cosmos:cosmoshub-3', 'cosmos', 'cosmoshub-3'],
    ['abc:A_b-1', 'abc', 'A_b-1'],
  ])('parses %s', (value, namespace, reference) => {
    expect(parseChainId(value)).toEqual({ namespace, reference });
  });

  it.each([
    '',
    'eip155',
    'eip155:',
    ':1',
    'ab:1', // namespace under 3 characters
    'abcdefghi:1', // namespace over 8
    'EIP155:1', // namespace is lowercase
    'eip155:1:2',
    'eip155:a.b',
    `eip155:${'1'.repeat(65)}`, // reference over 64 (CAIP-2's 32, widened for SPEC's 34-character Tron id)
    ' eip155:1',
    'eip155:1/slip44:60',
  ])('refuses %j', (value) => {
    expect(parseChainId(value)).toBeNull();
  });
});

describe('CAIP-19 token ids', () => {
  it.each([
    ['eip155:1/slip44:60', { chainId: 'eip155:1', assetNamespace: 'slip44', assetReference: '60' }],
    [
      'eip155:1/erc20:0xdac17f958d2ee523a2206206994597c13d831ec7',
      { chainId: 'eip155:1', assetNamespace: 'erc20', assetReference: '0xdac17f958d2ee523a2206206994597c13d831ec7' },
    ],
    [
      'tron:0x00000000000000000000000000000000/trc20:TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
      { chainId: 'tron:0x00000000000000000000000000000000', assetNamespace: 'trc20', assetReference: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' },
    ],
    ['xrpl:testnet/slip44:144', { chainId: 'xrpl:testnet', assetNamespace: 'slip44', assetReference: '144' }],
  ])('parses %s', (value, parsed) => {
    expect(parseTokenId(value)).toEqual(parsed);
  });

  it.each([
    '',
    'eip155:1',
    'eip155:1/',
    'eip155:1/slip44',
    'eip155:1/slip44:',
    'eip155:1/sl:60', // asset namespace under 3
    'eip155:1/SLIP44:60',
    'eip155:1/slip44:60/1',
    'eip155/slip44:60',
    `eip155:1/erc20:${'a'.repeat(129)}`, // asset reference over 128
    'eip155:1/erc20:0x dac',
  ])('refuses %j', (value) => {
    expect(parseTokenId(value)).toBeNull();
  });
});

describe('requireSupportedChain and requireKnownToken', () => {
  it('returns the registry’s chain', () => {
    expect(requireSupportedChain('eip155:137')).toBe(CHAINS[1]);
  });

  it.each(['eip155:2', 'not a chain', 'EIP155:1'])('refuses %j with INVALID_CHAIN and the supported ids', (value) => {
    const error = thrown(() => requireSupportedChain(value));
    expect(error.code).toBe('INVALID_CHAIN');
    expect(error.details).toEqual({ providedChainId: value, supportedChains: supportedChainIds() });
  });

  it('finds an ERC-20 by its lowercase id, and by a mixed-case contract too', () => {
    const usdt = requireKnownToken('eip155:1/erc20:0xdac17f958d2ee523a2206206994597c13d831ec7');
    expect(usdt).toMatchObject({ symbol: 'USDT', decimals: 6, address: '0xdAC17F958D2ee523a2206206994597C13D831ec7', kind: 'erc20' });
    expect(requireKnownToken('eip155:1/erc20:0xdAC17F958D2ee523a2206206994597C13D831ec7')).toBe(usdt);
  });

  it.each(['eip155:1/erc20:0x0000000000000000000000000000000000000001', 'eip155:1/slip44:0', 'garbage', 'tron:0x00000000000000000000000000000000/trc20:tr7nhqjekqxgtci8q8zy4pl8otszgjlj6t'])(
    'refuses %j with INVALID_TOKEN',
    (value) => {
      const error = thrown(() => requireKnownToken(value));
      expect(error.code).toBe('INVALID_TOKEN');
      expect(error.details).toEqual({ providedTokenId: value });
    },
  );
});

describe('the token catalog', () => {
  it('has every chain’s native asset under SPEC’s slip44 id, with the chain’s symbol and decimals', () => {
    const slip44 = { eip155: 60, bip122: 0, tron: 195, xrpl: 144 } as const;
    for (const chain of CHAINS) {
      const native = nativeToken(chain.id);
      expect(native).toMatchObject({
        id: `${chain.id}/slip44:${slip44[chain.namespace]}`,
        chainId: chain.id,
        symbol: chain.properties.nativeCurrency,
        decimals: chain.properties.decimals,
        address: '',
        kind: 'native',
      });
    }
  });

  it('lists USDT and USDC on Ethereum, Polygon, BSC and Tron with their real contracts and decimals', () => {
    const stablecoins = TOKENS.filter((token) => token.kind !== 'native').map(({ id, symbol, decimals, address }) => ({ id, symbol, decimals, address }));
    expect(stablecoins).toEqual([
      { id: 'eip155:1/erc20:0xdac17f958d2ee523a2206206994597c13d831ec7', symbol: 'USDT', decimals: 6, address: '0xdAC17F958D2ee523a2206206994597C13D831ec7' },
      { id: 'eip155:1/erc20:0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', symbol: 'USDC', decimals: 6, address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48' },
      { id: 'eip155:137/erc20:0xc2132d05d31c914a87c6611c10748aeb04b58e8f', symbol: 'USDT', decimals: 6, address: '0xc2132D05D31c914a87C6611C10748AEb04B58e8F' },
      { id: 'eip155:137/erc20:0x3c499c542cef5e3811e1192ce70d8cc03d5c3359', symbol: 'USDC', decimals: 6, address: '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359' },
      { id: 'eip155:56/erc20:0x55d398326f99059ff775485246999027b3197955', symbol: 'USDT', decimals: 18, address: '0x55d398326f99059fF775485246999027B3197955' },
      { id: 'eip155:56/erc20:0x8ac76a51cc950d9822d68b83fe1ad97b32cd580d', symbol: 'USDC', decimals: 18, address: '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d' },
      { id: 'tron:0x00000000000000000000000000000000/trc20:TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', symbol: 'USDT', decimals: 6, address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' },
      { id: 'tron:0x00000000000000000000000000000000/trc20:TEkxiTehnzSmSe2XqrBj4w32RUN966rdz8', symbol: 'USDC', decimals: 6, address: 'TEkxiTehnzSmSe2XqrBj4w32RUN966rdz8' },
      { id: 'eip155:11155111/erc20:0x1c7d4b196cb0c7b01d743fbc6116a902379c7238', symbol: 'USDC', decimals: 6, address: '0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238' },
    ]);
  });

  it('writes contracts in their canonical form: EIP-55 on EVM chains, valid base58check on Tron', () => {
    for (const token of TOKENS) {
      if (token.kind === 'erc20') expect(getAddress(token.address)).toBe(token.address);
      if (token.kind === 'trc20') expect(TronWeb.isAddress(token.address)).toBe(true);
    }
  });

  it('gives every token a valid, unique CAIP-19 id on a supported chain, and amounts as base-unit integers with min ≤ max', () => {
    expect(new Set(TOKENS.map((token) => token.id)).size).toBe(TOKENS.length);
    for (const token of TOKENS) {
      expect(parseTokenId(token.id)?.chainId).toBe(token.chainId);
      expect(supportedChainIds()).toContain(token.chainId);
      expect(findToken(token.id)).toBe(token);
      for (const amount of [token.minimumAmount, token.properties.minimumWithdrawal, token.properties.maximumWithdrawal]) expect(amount).toMatch(/^[1-9]\d*$/);
      expect(BigInt(token.properties.minimumWithdrawal) <= BigInt(token.properties.maximumWithdrawal)).toBe(true);
    }
  });

  it('scales bounds by decimals: one USDT is 10^6 base units on Ethereum and 10^18 on BSC', () => {
    expect(findToken('eip155:1/erc20:0xdac17f958d2ee523a2206206994597c13d831ec7')?.minimumAmount).toBe('1000000');
    expect(findToken('eip155:56/erc20:0x55d398326f99059ff775485246999027b3197955')?.minimumAmount).toBe('1000000000000000000');
    expect(nativeToken('eip155:1').minimumAmount).toBe('100000000000000'); // 0.0001 ETH
  });

  it('groups tokens by chain', () => {
    expect(tokensOfChain('eip155:1').map((token) => token.symbol)).toEqual(['ETH', 'USDT', 'USDC']);
    expect(tokensOfChain('xrpl:mainnet').map((token) => token.symbol)).toEqual(['XRP']);
    expect(tokensOfChain('eip155:2')).toEqual([]);
  });
});
