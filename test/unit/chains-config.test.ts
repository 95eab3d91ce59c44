import { generateMnemonic } from 'bip39';
import { describe, expect, it } from 'vitest';
import { chainAvailability, chainBackend } from '../../src/chains/chain-availability.js';
import { checkConfiguredKeys, ChainsConfigError, parseChainsConfig } from '../../src/chains/config.js';
import { eip1559Estimate, gasLimitFromEstimate, gweiToWei } from '../../src/chains/evm/fees.js';
import { createNonceTracker, NONCE_MEMORY_MS } from '../../src/chains/evm/nonces.js';
import { findChain } from '../../src/catalog/registry.js';
import { createNodeGateways } from '../../src/chains/node-gateways.js';
import { silentLogger } from '../../src/log.js';
import { createSigner } from '../../src/chains/signer/signer.js';

const issuesOf = (document: unknown): string[] => {
  try {
    parseChainsConfig(document);
  } catch (error) {
    if (error instanceof ChainsConfigError) return error.issues;
    throw error;
  }
  return [];
};

const GWEI = 1_000_000_000n;

describe('CHAINS_CONFIG', () => {
  it('accepts a full entry and applies the defaults', () => {
    const config = parseChainsConfig({
      chains: {
        'eip155:1': { rpcUrls: ['https://eth.example/v3/key', 'http://127.0.0.1:8545'], confirmations: 20, fees: { maxFeePerGasGwei: 200, priorityFeeGwei: 1.5 } },
        'bip122:000000000019d6689c085ae165831e93': { enabled: false, rpcUrls: ['https://blockstream.example/api'], fees: { feeTargetBlocks: 3 } },
      },
    });
    expect(config.chains.get('eip155:1')).toEqual({
      enabled: true,
      rpcUrls: ['https://eth.example/v3/key', 'http://127.0.0.1:8545'],
      confirmations: 20,
      fees: { maxFeePerGasGwei: 200, priorityFeeGwei: 1.5 },
      rpcTimeoutMs: 10_000,
    });
    expect(config.chains.get('bip122:000000000019d6689c085ae165831e93')?.enabled).toBe(false);
  });

  it('names every bad key: unknown chain ids, endpoints, numbers, unknown fields', () => {
    expect(
      issuesOf({
        chains: {
          'eip155:2': { rpcUrls: ['http://x'] },
          'eip155:137': { rpcUrls: [], confirmations: 0, fees: { maxFeePerGasGwei: -1, tip: 2 } },
          'eip155:56': { rpcUrls: ['ws://node'], extra: true, accountXpub: 'xprv9s21ZrQH143K' },
        },
      }),
    ).toEqual([
      expect.stringMatching(/^chains\.eip155:2: unknown chain id \(supported: eip155:1, /),
      'chains.eip155:137.rpcUrls: at least one RPC endpoint',
      expect.stringMatching(/^chains\.eip155:137\.confirmations: /),
      expect.stringMatching(/^chains\.eip155:137\.fees\.maxFeePerGasGwei: /),
      expect.stringMatching(/^chains\.eip155:137\.fees: .*tip/),
      'chains.eip155:56.rpcUrls.0: an http:// or https:// JSON-RPC endpoint',
      'chains.eip155:56.accountXpub: an account-level extended public key (xpub…)',
      'chains.eip155:56: Unrecognized key: "extra"',
    ]);
    expect(issuesOf({ networks: {} })).toEqual([expect.stringMatching(/^chains: /), expect.stringMatching(/networks/)]);
  });

  it('Bitcoin runs on Esplora by default, or on Bitcoin Core (kind "rpc") with a user and password or the node\'s cookie file', () => {
    const BITCOIN = 'bip122:000000000019d6689c085ae165831e93';
    const BITCOIN_TESTNET = 'bip122:000000000933ea01ad0ee984209779ba';
    const config = parseChainsConfig({
      chains: {
        [BITCOIN]: { kind: 'rpc', rpcUrls: ['http://bitcoind:8332'], rpcAuth: { user: 'ledgergate', password: 'secret' } },
        [BITCOIN_TESTNET]: { kind: 'rpc', rpcUrls: ['http://bitcoind:18332'], rpcAuth: { cookieFile: '/var/lib/bitcoind/testnet3/.cookie' } },
      },
    });
    expect(config.chains.get(BITCOIN)).toMatchObject({ kind: 'rpc', rpcAuth: { user: 'ledgergate', password: 'secret' } });
    expect(config.chains.get(BITCOIN_TESTNET)).toMatchObject({ kind: 'rpc', rpcAuth: { cookieFile: '/var/lib/bitcoind/testnet3/.cookie' } });
    expect(parseChainsConfig({ chains: { [BITCOIN]: { rpcUrls: ['https://electrs.example'] } } }).chains.get(BITCOIN)?.kind).toBe('esplora');
    expect(
      issuesOf({
        chains: {
          [BITCOIN]: { rpcUrls: ['https://electrs.example'], rpcAuth: { user: 'u', password: 'p' } },
          [BITCOIN_TESTNET]: { kind: 'electrum', rpcUrls: ['http://bitcoind:18332'], rpcAuth: { user: 'u' } },
          'eip155:1': { kind: 'rpc', rpcUrls: ['http://127.0.0.1:8545'] },
        },
      }),
    ).toEqual([
      `chains.${BITCOIN}.rpcAuth: rpcAuth is for kind "rpc" (Bitcoin Core); an Esplora URL needs none`,
      expect.stringMatching(new RegExp(`^chains\\.${BITCOIN_TESTNET}\\.kind: `)),
      expect.stringMatching(new RegExp(`^chains\\.${BITCOIN_TESTNET}\\.rpcAuth: `)),
      'chains.eip155:1: Unrecognized key: "kind"',
    ]);
  });

  it('builds the Bitcoin Core gateway for kind "rpc" only with the service\'s own outputs to give it', () => {
    const BITCOIN = 'bip122:000000000019d6689c085ae165831e93';
    const config = parseChainsConfig({ chains: { [BITCOIN]: { kind: 'rpc', rpcUrls: ['http://bitcoind:8332'], rpcAuth: { user: 'u', password: 'p' } } } });
    const chains = [findChain(BITCOIN)!];
    expect(() => createNodeGateways(chains, config, silentLogger)).toThrow(/kind "rpc" needs the service's own outputs/);
    expect(createNodeGateways(chains, config, silentLogger, { bitcoinOwnOutputs: async () => [] }).get(BITCOIN)?.chain.id).toBe(BITCOIN);
  });

  it('decides where each chain runs: configured on its nodes, the rest on the devnet outside production and nowhere in production', () => {
    const chains = parseChainsConfig({ chains: { 'eip155:1': { rpcUrls: ['http://a'], confirmations: 3 }, 'eip155:137': { enabled: false, rpcUrls: ['http://b'] } } });
    expect(chainBackend({ isProduction: true, chains }, 'eip155:1')).toBe('node');
    expect(chainBackend({ isProduction: true, chains }, 'eip155:56')).toBe('none');
    expect(chainBackend({ isProduction: false, chains }, 'eip155:56')).toBe('devnet');
    expect(chainBackend({ isProduction: false, chains }, 'eip155:137')).toBe('none');
    expect(chainBackend({ isProduction: false, chains }, 'eip155:2')).toBe('none');
    const availability = chainAvailability({ isProduction: true, chains });
    expect(availability.isChainRunning('eip155:1')).toBe(true);
    expect(availability.definitionOf(findChain('eip155:1')!).properties.confirmations).toBe(3);
    expect(availability.definitionOf(findChain('eip155:56')!).properties.confirmations).toBe(15);
  });

  it('needs the signer for a configured chain, and an accountXpub equal to the signer’s', () => {
    const signer = createSigner(generateMnemonic(256));
    const own = parseChainsConfig({ chains: { 'eip155:1': { rpcUrls: ['http://a'], accountXpub: signer.accountXpub('evm', 'mainnet') } } });
    expect(() => checkConfiguredKeys(own, signer)).not.toThrow();
    expect(() => checkConfiguredKeys(own, null)).toThrow(/chains\.eip155:1: enabled, but LEDGERGATE_SIGNER_MNEMONIC is not set/);
    const other = createSigner(generateMnemonic(256)).accountXpub('evm', 'mainnet');
    const foreign = parseChainsConfig({ chains: { 'eip155:1': { rpcUrls: ['http://a'], accountXpub: other } } });
    expect(() => checkConfiguredKeys(foreign, signer)).toThrow(/chains\.eip155:1\.accountXpub: is not the signer's evm mainnet account key/);
  });
});

describe('EVM fee policy (EIP-1559)', () => {
  it('offers base fee × 2 + the node’s tip; the fee is gasLimit × maxFeePerGas', () => {
    expect(eip1559Estimate({ gasLimit: 21_000n, baseFeePerGas: 10n * GWEI, suggestedPriorityFee: GWEI, policy: undefined })).toEqual({
      fee: 21_000n * 21n * GWEI,
      parameters: { gasLimit: '21000', maxFeePerGas: String(21n * GWEI), maxPriorityFeePerGas: String(GWEI) },
    });
  });

  it('applies the configured tip, multiplier and cap (the tip never above the cap)', () => {
    const policy = { priorityFeeGwei: 2.5, baseFeeMultiplier: 1.5, maxFeePerGasGwei: 20 };
    expect(eip1559Estimate({ gasLimit: 50_000n, baseFeePerGas: 10n * GWEI, suggestedPriorityFee: GWEI, policy }).parameters).toEqual({
      gasLimit: '50000',
      maxFeePerGas: String(17_500_000_000n),
      maxPriorityFeePerGas: String(2_500_000_000n),
    });
    const capped = eip1559Estimate({ gasLimit: 50_000n, baseFeePerGas: 100n * GWEI, suggestedPriorityFee: GWEI, policy: { maxFeePerGasGwei: 20, priorityFeeGwei: 30 } });
    expect(capped).toEqual({ fee: 50_000n * 20n * GWEI, parameters: { gasLimit: '50000', maxFeePerGas: String(20n * GWEI), maxPriorityFeePerGas: String(20n * GWEI) } });
    expect(gweiToWei(0.000000001)).toBe(1n);
  });

  it('adds a quarter to eth_estimateGas, never going under 21000', () => {
    expect(gasLimitFromEstimate(51_000n)).toBe(63_750n);
    expect(gasLimitFromEstimate(1n)).toBe(21_000n);
  });
});

describe('EVM nonce manager', () => {
  it('takes the node’s pending count, or one past the last nonce sent while the node may not show it yet', () => {
    let now = 0;
    const nonces = createNonceTracker(() => now);
    expect(nonces.next('0xAbC', 4)).toBe(4);
    nonces.sent('0xabc', 4);
    expect(nonces.next('0xABC', 4)).toBe(5); // a lagging node
    expect(nonces.next('0xabc', 7)).toBe(7); // the node knows more
    now += NONCE_MEMORY_MS + 1;
    expect(nonces.next('0xabc', 4)).toBe(4); // dropped by the network: no gap kept forever
  });
});
