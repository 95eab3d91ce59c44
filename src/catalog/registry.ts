import type { ChainDefinition } from './chain.js';

const evm = (id: number, name: string, nativeCurrency: string, confirmations: number, isTestnet: boolean): ChainDefinition => ({
  id: `eip155:${id}`,
  name,
  namespace: 'eip155',
  reference: String(id),
  isTestnet,
  family: 'evm',
  network: isTestnet ? 'testnet' : 'mainnet',
  evmChainId: id,
  properties: { nativeCurrency, decimals: 18, confirmations },
  keySpace: 'evm',
});

/** SPEC §2.1: the 11 supported chains, with their exact CAIP-2 ids, in SPEC's order. */
export const CHAINS: readonly ChainDefinition[] = [
  evm(1, 'Ethereum', 'ETH', 12, false),
  evm(137, 'Polygon', 'POL', 64, false),
  evm(56, 'BSC', 'BNB', 15, false),
  {
    id: 'bip122:000000000019d6689c085ae165831e93',
    name: 'Bitcoin',
    namespace: 'bip122',
    reference: '000000000019d6689c085ae165831e93',
    isTestnet: false,
    family: 'bitcoin',
    network: 'mainnet',
    properties: { nativeCurrency: 'BTC', decimals: 8, confirmations: 2 },
    keySpace: 'bitcoin-mainnet',
  },
  {
    id: 'tron:0x00000000000000000000000000000000',
    name: 'Tron',
    namespace: 'tron',
    reference: '0x00000000000000000000000000000000',
    isTestnet: false,
    family: 'tron',
    network: 'mainnet',
    properties: { nativeCurrency: 'TRX', decimals: 6, confirmations: 19 },
    keySpace: 'tron',
  },
  {
    id: 'xrpl:mainnet',
    name: 'XRP',
    namespace: 'xrpl',
    reference: 'mainnet',
    isTestnet: false,
    family: 'xrp',
    network: 'mainnet',
    properties: { nativeCurrency: 'XRP', decimals: 6, confirmations: 1 },
    keySpace: 'xrp',
  },
  evm(11155111, 'Ethereum Sepolia', 'ETH', 6, true),
  evm(97, 'BSC Testnet', 'tBNB', 6, true),
  {
    id: 'bip122:000000000933ea01ad0ee984209779ba',
    name: 'Bitcoin Testnet',
    namespace: 'bip122',
    reference: '000000000933ea01ad0ee984209779ba',
    isTestnet: true,
    family: 'bitcoin',
    network: 'testnet',
    properties: { nativeCurrency: 'tBTC', decimals: 8, confirmations: 1 },
    keySpace: 'bitcoin-testnet',
  },
  {
    id: 'tron:shasta',
    name: 'Tron Shasta',
    namespace: 'tron',
    reference: 'shasta',
    isTestnet: true,
    family: 'tron',
    network: 'testnet',
    properties: { nativeCurrency: 'TRX', decimals: 6, confirmations: 5 },
    keySpace: 'tron',
  },
  {
    id: 'xrpl:testnet',
    name: 'XRP Testnet',
    namespace: 'xrpl',
    reference: 'testnet',
    isTestnet: true,
    family: 'xrp',
    network: 'testnet',
    properties: { nativeCurrency: 'XRP', decimals: 6, confirmations: 1 },
    keySpace: 'xrp',
  },
];

const byId = new Map(CHAINS.map((chain) => [chain.id, chain]));

export const findChain = (chainId: string): ChainDefinition | undefined => byId.get(chainId);

export const supportedChainIds = (): string[] => CHAINS.map((chain) => chain.id);
