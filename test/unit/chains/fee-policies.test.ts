import { describe, expect, it } from 'vitest';
import { ChainsConfigError, parseChainsConfig } from '../../../src/chains/config.js';
import { bitcoinTronXrpGatewayFactories } from '../../../src/chains/node-gateways.js';
import { findChain } from '../../../src/catalog/registry.js';
import { FeeLimitExceededError } from '../../../src/chains/tron/resource-fees.js';
import { silentLogger } from '../../../src/log.js';
import { loadFixture, replayHttp, type HttpExchange, type XrplExchange } from '../../support/node-replay.js';

/**
 * Each family's `fees` in CHAINS_CONFIG reaches its gateway: the entry is parsed as an operator
 * writes it, the gateway made by the production factory, and its estimates read from recorded node
 * responses (test/fixtures). Without a policy the estimates are the defaults the gateway tests pin.
 */
const BITCOIN = 'bip122:000000000019d6689c085ae165831e93';
const TRON = 'tron:0x00000000000000000000000000000000';
const XRP = 'xrpl:mainnet';
const NODE = 'http://node.test';

/** rippled's JSON-RPC over HTTP: the recorded commands as the `{ method, params: [fields] }` POSTs rippledJsonRpc sends */
const rippledOverHttp = (exchanges: XrplExchange[]): HttpExchange[] =>
  exchanges.flatMap(({ request: { command, ...fields }, response }) =>
    'result' in response ? [{ request: { method: 'POST' as const, path: '', body: { method: command, params: [fields] } }, response: { status: 200, body: { result: { ...(response.result as object), status: 'success' } } } }] : [],
  );

const fixtures = {
  [BITCOIN]: loadFixture<HttpExchange>('bitcoin', 'esplora').exchanges,
  [TRON]: loadFixture<HttpExchange>('tron', 'fullnode-http').exchanges,
  [XRP]: rippledOverHttp(loadFixture<XrplExchange>('xrp', 'rippled').exchanges),
};

/** the gateway CHAINS_CONFIG's entry `{ rpcUrls: [NODE], fees }` makes for the chain */
const gatewayFor = (chainId: keyof typeof fixtures, fees?: Record<string, number>) => {
  const settings = parseChainsConfig({ chains: { [chainId]: { rpcUrls: [NODE], ...(fees ? { fees } : {}) } } }).chains.get(chainId)!;
  const chain = findChain(chainId)!;
  const factory = bitcoinTronXrpGatewayFactories({ fetch: replayHttp(fixtures[chainId], NODE).fetch, sleep: async () => {} })[chain.family]!;
  return factory(chain, settings, silentLogger);
};

const issuesOf = (document: unknown): string[] => {
  try {
    parseChainsConfig(document);
    return [];
  } catch (error) {
    if (error instanceof ChainsConfigError) return error.issues;
    throw error;
  }
};

describe('fee policy per family (CHAINS_CONFIG fees)', () => {
  it('each family has its own fields; another family\'s, unknown ones and inverted bounds are refused', () => {
    expect(issuesOf({ chains: { [BITCOIN]: { rpcUrls: [NODE], fees: { feeTargetBlocks: 6, minFeeRateSatPerVbyte: 2, maxFeeRateSatPerVbyte: 200 } } } })).toEqual([]);
    expect(issuesOf({ chains: { [TRON]: { rpcUrls: [NODE], fees: { maxFeeLimitSun: 50_000_000 } } } })).toEqual([]);
    expect(issuesOf({ chains: { [XRP]: { rpcUrls: [NODE], fees: { maxFeeDrops: 5_000 } } } })).toEqual([]);
    expect(
      issuesOf({
        chains: {
          [BITCOIN]: { rpcUrls: [NODE], fees: { minFeeRateSatPerVbyte: 50, maxFeeRateSatPerVbyte: 10 } },
          [TRON]: { rpcUrls: [NODE], fees: { maxFeePerGasGwei: 100, maxFeeLimitSun: 16_000_000_000 } },
          [XRP]: { rpcUrls: [NODE], fees: { maxFeeDrops: 0.5 } },
          'bip122:000000000933ea01ad0ee984209779ba': { rpcUrls: [NODE], fees: { feeTargetBlocks: 0 } },
        },
      }),
    ).toEqual([
      `chains.${BITCOIN}.fees.minFeeRateSatPerVbyte: minFeeRateSatPerVbyte is above maxFeeRateSatPerVbyte`,
      expect.stringMatching(new RegExp(`^chains\\.${TRON}\\.fees\\.maxFeeLimitSun: `)),
      expect.stringMatching(new RegExp(`^chains\\.${TRON}\\.fees: .*maxFeePerGasGwei`)),
      expect.stringMatching(new RegExp(`^chains\\.${XRP}\\.fees\\.maxFeeDrops: `)),
      expect.stringMatching(/^chains\.bip122:000000000933ea01ad0ee984209779ba\.fees\.feeTargetBlocks: /),
    ]);
  });

  describe('Bitcoin: the estimate\'s target and the bounds of the rate', () => {
    const rateOf = async (fees?: Record<string, number>) => (await gatewayFor(BITCOIN, fees).estimateFee({ from: 'bc1q8c6fshw2dlwun7ekn9qwf37cu2rn755upcp6el', to: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', asset: 'native', amount: 60_000n })).parameters.feeRateSatPerVbyte;

    it('feeTargetBlocks picks the node\'s estimate for that target (default 3 blocks)', async () => {
      // /fee-estimates: 1 → 23.113, 3 → 18.204, 6 → 12.723, 144 → 2.011 sat/vB, rounded up
      expect(await rateOf()).toBe('19');
      expect(await rateOf({ feeTargetBlocks: 1 })).toBe('24');
      expect(await rateOf({ feeTargetBlocks: 6 })).toBe('13');
      expect(await rateOf({ feeTargetBlocks: 144 })).toBe('3');
    });

    it('an estimate above maxFeeRateSatPerVbyte is capped, one below minFeeRateSatPerVbyte raised; the fee follows the rate', async () => {
      expect(await rateOf({ feeTargetBlocks: 1, maxFeeRateSatPerVbyte: 15 })).toBe('15');
      expect(await rateOf({ feeTargetBlocks: 144, minFeeRateSatPerVbyte: 5 })).toBe('5');
      expect(await rateOf({ minFeeRateSatPerVbyte: 5, maxFeeRateSatPerVbyte: 40 })).toBe('19');
      const estimate = await gatewayFor(BITCOIN, { maxFeeRateSatPerVbyte: 10 }).estimateFee({ from: 'bc1q8c6fshw2dlwun7ekn9qwf37cu2rn755upcp6el', to: 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', asset: 'native', amount: 60_000n });
      expect(estimate).toEqual({ fee: 141n * 10n, parameters: { feeRateSatPerVbyte: '10' } });
    });
  });

  describe('Tron: the ceiling of a TRC-20 fee limit', () => {
    const SETTLEMENT = 'TKTuTvBn4qZpeYFuXz1SuL1B94NgtK5EnT';
    const RECEIVE_0 = 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH';
    const USDT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
    // the dry run uses 64,285 energy at 210 sun: 13,499,850 sun, with 20% headroom 16,199,820
    const estimate = (fees?: Record<string, number>) => gatewayFor(TRON, fees).estimateFee({ from: SETTLEMENT, to: RECEIVE_0, asset: USDT, amount: 10_000_000n });

    it('a ceiling above the limit changes nothing; one inside the headroom cuts the headroom', async () => {
      expect(await estimate()).toEqual({ fee: 13_499_850n, parameters: { feeLimit: '16199820', energy: '64285' } });
      expect(await estimate({ maxFeeLimitSun: 20_000_000 })).toEqual({ fee: 13_499_850n, parameters: { feeLimit: '16199820', energy: '64285' } });
      expect(await estimate({ maxFeeLimitSun: 15_000_000 })).toEqual({ fee: 13_499_850n, parameters: { feeLimit: '15000000', energy: '64285' } });
      expect(await estimate({ maxFeeLimitSun: 13_499_850 })).toMatchObject({ parameters: { feeLimit: '13499850' } });
    });

    it('a ceiling below the energy\'s cost is refused, not signed to run out of energy on chain', async () => {
      await expect(estimate({ maxFeeLimitSun: 13_499_849 })).rejects.toBeInstanceOf(FeeLimitExceededError);
      await expect(estimate({ maxFeeLimitSun: 10_000_000 })).rejects.toThrow('energy costs 13499850 sun, above the fee policy\'s maxFeeLimitSun of 10000000');
    });

    it('a TRX transfer carries no fee limit: the policy does not touch it', async () => {
      expect(await gatewayFor(TRON, { maxFeeLimitSun: 1 }).estimateFee({ from: SETTLEMENT, to: RECEIVE_0, asset: 'native', amount: 1n })).toEqual({ fee: 0n, parameters: { feeLimit: '0' } });
    });
  });

  describe('XRP: the highest fee offered', () => {
    // fee: base_fee 10 drops, open_ledger_fee 12 drops
    const feeOf = async (fees?: Record<string, number>) => (await gatewayFor(XRP, fees).estimateFee({ from: 'rHsMGQEkVNJmpGWs8XUBoTBiAAbwxZN5v3', to: 'rf1BiGeXwwQoi8Z2ueFYTEXSwuJYfV2Jpn', asset: 'native', amount: 1n })).fee;

    it('maxFeeDrops caps the open ledger\'s fee, never below the base fee', async () => {
      expect(await feeOf()).toBe(12n);
      expect(await feeOf({ maxFeeDrops: 100 })).toBe(12n);
      expect(await feeOf({ maxFeeDrops: 11 })).toBe(11n);
      expect(await feeOf({ maxFeeDrops: 5 })).toBe(10n);
    });
  });
});
