import type { ChainDefinition } from './chain.js';
import { CHAINS, findChain } from './registry.js';

export type TokenKind = 'native' | 'erc20' | 'trc20';

/** SPEC §2.6's token (without `enabled`, which depends on the organization). */
export interface TokenDefinition {
  /** CAIP-19 */
  id: string;
  /** CAIP-2 */
  chainId: string;
  name: string;
  symbol: string;
  decimals: number;
  /** the contract: EIP-55 on EVM chains, base58 on Tron; '' for the native asset */
  address: string;
  kind: TokenKind;
  /** smallest deposit credited, base units (SPEC §8) */
  minimumAmount: string;
  /** CONTRACT §6: bounds behind WITHDRAWAL_BELOW_MINIMUM / WITHDRAWAL_ABOVE_MAXIMUM, base units */
  properties: { minimumWithdrawal: string; maximumWithdrawal: string };
}

/** Amounts below are written in whole units of the asset and scaled by its decimals. */
interface Bounds {
  minimumDeposit: string;
  minimumWithdrawal: string;
  maximumWithdrawal: string;
}

/** `units` whole or fractional units ('0.001') in base units of an asset with `decimals`. */
const toBaseUnits = (units: string, decimals: number): string => {
  const [whole = '0', fraction = ''] = units.split('.');
  if (fraction.length > decimals) throw new Error(`${units} has more than ${decimals} decimals`);
  return (BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, '0') || '0')).toString();
};

const withBounds = (decimals: number, bounds: Bounds) => ({
  minimumAmount: toBaseUnits(bounds.minimumDeposit, decimals),
  properties: { minimumWithdrawal: toBaseUnits(bounds.minimumWithdrawal, decimals), maximumWithdrawal: toBaseUnits(bounds.maximumWithdrawal, decimals) },
});

/** SLIP-44 coin types of the native assets (SPEC §2.1). */
const slip44ByNamespace: Record<ChainDefinition['namespace'], number> = { eip155: 60, bip122: 0, tron: 195, xrpl: 144 };

/** Native assets by symbol: name and bounds. Dust limits and reserves decide the minimums (BTC dust, XRP's 1 XRP reserve). */
const nativeAssets: Record<string, { name: string; bounds: Bounds }> = {
  ETH: { name: 'Ether', bounds: { minimumDeposit: '0.0001', minimumWithdrawal: '0.001', maximumWithdrawal: '1000' } },
  POL: { name: 'Polygon Ecosystem Token', bounds: { minimumDeposit: '0.01', minimumWithdrawal: '0.1', maximumWithdrawal: '1000000' } },
  BNB: { name: 'BNB', bounds: { minimumDeposit: '0.0001', minimumWithdrawal: '0.001', maximumWithdrawal: '1000' } },
  tBNB: { name: 'Test BNB', bounds: { minimumDeposit: '0.0001', minimumWithdrawal: '0.001', maximumWithdrawal: '1000' } },
  BTC: { name: 'Bitcoin', bounds: { minimumDeposit: '0.0001', minimumWithdrawal: '0.0005', maximumWithdrawal: '100' } },
  tBTC: { name: 'Test Bitcoin', bounds: { minimumDeposit: '0.0001', minimumWithdrawal: '0.0005', maximumWithdrawal: '100' } },
  TRX: { name: 'TRON', bounds: { minimumDeposit: '1', minimumWithdrawal: '1', maximumWithdrawal: '10000000' } },
  XRP: { name: 'XRP', bounds: { minimumDeposit: '0.1', minimumWithdrawal: '1', maximumWithdrawal: '10000000' } },
};

const nativeOf = (chain: ChainDefinition): TokenDefinition => {
  const { nativeCurrency: symbol, decimals } = chain.properties;
  const asset = nativeAssets[symbol];
  if (!asset) throw new Error(`no native asset is described for ${symbol} (${chain.id})`);
  return {
    id: `${chain.id}/slip44:${slip44ByNamespace[chain.namespace]}`,
    chainId: chain.id,
    name: asset.name,
    symbol,
    decimals,
    address: '',
    kind: 'native',
    ...withBounds(decimals, asset.bounds),
  };
};

const STABLECOIN_BOUNDS: Bounds = { minimumDeposit: '1', minimumWithdrawal: '1', maximumWithdrawal: '1000000' };

const stablecoin = (chainId: string, symbol: 'USDT' | 'USDC', address: string, decimals: number): TokenDefinition => {
  const kind = chainId.startsWith('tron:') ? 'trc20' : 'erc20';
  // CAIP-19 writes ERC-20 contracts in lowercase; Tron's base58 is case-sensitive and stays as it is
  const reference = kind === 'erc20' ? address.toLowerCase() : address;
  return {
    id: `${chainId}/${kind}:${reference}`,
    chainId,
    name: symbol === 'USDT' ? 'Tether USD' : 'USD Coin',
    symbol,
    decimals,
    address,
    kind,
    ...withBounds(decimals, STABLECOIN_BOUNDS),
  };
};

/**
 * The contracts of Tether's and Circle's own deployments (checked against their published lists):
 * 6 decimals everywhere except BNB Smart Chain, where both bridged tokens have 18. Polygon's USDC
 * is Circle's native one, not the bridged USDC.e.
 */
const STABLECOINS: readonly TokenDefinition[] = [
  stablecoin('eip155:1', 'USDT', '0xdAC17F958D2ee523a2206206994597C13D831ec7', 6),
  stablecoin('eip155:1', 'USDC', '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', 6),
  stablecoin('eip155:137', 'USDT', '0xc2132D05D31c914a87C6611C10748AEb04B58e8F', 6),
  stablecoin('eip155:137', 'USDC', '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359', 6),
  stablecoin('eip155:56', 'USDT', '0x55d398326f99059fF775485246999027B3197955', 18),
  stablecoin('eip155:56', 'USDC', '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d', 18),
  stablecoin('tron:0x00000000000000000000000000000000', 'USDT', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', 6),
  stablecoin('tron:0x00000000000000000000000000000000', 'USDC', 'TEkxiTehnzSmSe2XqrBj4w32RUN966rdz8', 6),
  // Circle's testnet USDC (developers.circle.com: USDC on test networks)
  stablecoin('eip155:11155111', 'USDC', '0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238', 6),
];

/** Every token ledgergate knows: each chain's native asset (in the registry's order), then the stablecoins. */
export const TOKENS: readonly TokenDefinition[] = [...CHAINS.map(nativeOf), ...STABLECOINS];

const byId = new Map(TOKENS.map((token) => [token.id, token]));

/** ERC-20 references compare case-insensitively (an address is the same in any case); others exactly. */
const canonicalTokenId = (tokenId: string) => {
  const match = /^(eip155:[^/]+\/erc20:)(0x[0-9a-fA-F]{40})$/.exec(tokenId);
  return match ? `${match[1]}${match[2]!.toLowerCase()}` : tokenId;
};

export const findToken = (tokenId: string): TokenDefinition | undefined => byId.get(canonicalTokenId(tokenId));

export const tokensOfChain = (chainId: string): TokenDefinition[] => TOKENS.filter((token) => token.chainId === chainId);

/** The chain's native asset (fees, gas wallets); throws for a chain the registry does not have. */
export const nativeToken = (chainId: string): TokenDefinition => {
  const chain = findChain(chainId);
  if (!chain) throw new Error(`unknown chain ${chainId}`);
  return byId.get(`${chain.id}/slip44:${slip44ByNamespace[chain.namespace]}`)!;
};

/**
 * The catalog token a watcher's transfer is in: 'native' is the chain's native asset; a contract
 * is compared case-insensitively on EVM chains (an address in any case is the same), exactly on
 * Tron (base58 is case-sensitive). Undefined for an unknown chain or an asset not in the catalog.
 */
export const tokenOfAsset = (chainId: string, asset: string): TokenDefinition | undefined => {
  if (!findChain(chainId)) return undefined;
  if (asset === 'native') return nativeToken(chainId);
  const evm = chainId.startsWith('eip155:');
  return TOKENS.find(
    (token) => token.chainId === chainId && token.kind !== 'native' && (evm ? token.address.toLowerCase() === asset.toLowerCase() : token.address === asset),
  );
};

/** SPEC §2.7: the `Token` object inside deposits, withdrawals, balances and events. */
export const tokenSummary = (token: TokenDefinition) => ({
  id: token.id,
  name: token.name,
  symbol: token.symbol,
  decimals: token.decimals,
  address: token.address,
});

export type TokenSummary = ReturnType<typeof tokenSummary>;

/** The summary of a catalog token by id; throws for an id outside the catalog (a recorded id always is in it). */
export const tokenSummaryOf = (tokenId: string): TokenSummary => {
  const token = findToken(tokenId);
  if (!token) throw new Error(`token ${tokenId} is not in the catalog`);
  return tokenSummary(token);
};
