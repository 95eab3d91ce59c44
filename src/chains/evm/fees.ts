import { parseUnits } from 'ethers';
import type { EvmFeePolicy } from '../config.js';
import type { FeeEstimate } from '../gateway.js';

export const NATIVE_TRANSFER_GAS = 21_000n;
export const DEFAULT_TOKEN_TRANSFER_GAS = 100_000n;
const DEFAULT_BASE_FEE_MULTIPLIER = 2;
/** eth_estimateGas gives what the call used just now; a token's storage can cost more by the time it is mined */
const GAS_ESTIMATE_MARGIN_PERCENT = 125n;

/** gwei (a config number, fractions allowed) in wei */
export const gweiToWei = (gwei: number): bigint => parseUnits(gwei.toFixed(9).replace(/\.?0+$/, ''), 'gwei');

/** A multiplier such as 1.5 applied to wei without floating point: in thousandths. */
const times = (wei: bigint, multiplier: number): bigint => (wei * BigInt(Math.round(multiplier * 1000))) / 1000n;

/** With margin, never under the intrinsic gas of a transfer. */
export const gasLimitFromEstimate = (estimatedGas: bigint): bigint => {
  const withMargin = (estimatedGas * GAS_ESTIMATE_MARGIN_PERCENT + 99n) / 100n;
  return withMargin > NATIVE_TRANSFER_GAS ? withMargin : NATIVE_TRANSFER_GAS;
};

/**
 * EIP-1559 under the chain's fee policy: maxFeePerGas = base fee × multiplier + tip, capped at the
 * policy's maximum (the tip too, since it can never exceed maxFeePerGas). The fee is the most the
 * transaction can cost (gasLimit × maxFeePerGas): what a sweep deducts and a gas top-up sends, so
 * the sender always holds enough for the node to accept it.
 */
export const eip1559Estimate = (input: { gasLimit: bigint; baseFeePerGas: bigint; suggestedPriorityFee: bigint; policy: EvmFeePolicy | undefined }): FeeEstimate => {
  const { gasLimit, baseFeePerGas, suggestedPriorityFee, policy } = input;
  const priority = policy?.priorityFeeGwei === undefined ? suggestedPriorityFee : gweiToWei(policy.priorityFeeGwei);
  let maxFeePerGas = times(baseFeePerGas, policy?.baseFeeMultiplier ?? DEFAULT_BASE_FEE_MULTIPLIER) + priority;
  if (policy?.maxFeePerGasGwei !== undefined) {
    const cap = gweiToWei(policy.maxFeePerGasGwei);
    if (maxFeePerGas > cap) maxFeePerGas = cap;
  }
  const maxPriorityFeePerGas = priority < maxFeePerGas ? priority : maxFeePerGas;
  return {
    fee: gasLimit * maxFeePerGas,
    parameters: { gasLimit: gasLimit.toString(), maxFeePerGas: maxFeePerGas.toString(), maxPriorityFeePerGas: maxPriorityFeePerGas.toString() },
  };
};
