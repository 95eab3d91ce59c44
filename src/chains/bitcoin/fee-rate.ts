import type { BitcoinFeePolicy } from '../config.js';
import type { FeeEstimate } from '../gateway.js';
import { p2wpkhVirtualSize } from './spend-planning.js';

/** the confirmation target (blocks) the fee rate is taken for, unless CHAINS_CONFIG's `fees` says otherwise */
export const DEFAULT_FEE_TARGET_BLOCKS = 3;

/** The policy's bounds applied to an estimated rate (sat/vB). */
export const boundedFeeRate = (rate: bigint, fees: BitcoinFeePolicy = {}): bigint => {
  if (fees.maxFeeRateSatPerVbyte !== undefined && rate > BigInt(fees.maxFeeRateSatPerVbyte)) return BigInt(fees.maxFeeRateSatPerVbyte);
  if (fees.minFeeRateSatPerVbyte !== undefined && rate < BigInt(fees.minFeeRateSatPerVbyte)) return BigInt(fees.minFeeRateSatPerVbyte);
  return rate;
};

/** What a node's estimated rate (sat/vB) offers, within the policy: one P2WPKH input, recipient and change, what the processor's coin selection starts from. */
export const bitcoinFeeEstimate = (estimatedRate: bigint, fees: BitcoinFeePolicy = {}): FeeEstimate => {
  const rate = boundedFeeRate(estimatedRate, fees);
  return { fee: p2wpkhVirtualSize(1, 2) * rate, parameters: { feeRateSatPerVbyte: String(rate) } };
};
