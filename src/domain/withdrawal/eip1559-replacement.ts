/** An EIP-1559 transaction's two fee fields, wei per gas. */
export interface Eip1559Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/**
 * EIP-1559 replacement (geth's, Nethermind's, Erigon's pools alike): a pending transaction is
 * replaced by one of the same sender and nonce only when BOTH its maxFeePerGas and its
 * maxPriorityFeePerGas are at least 10 % higher.
 */
export const REPLACEMENT_BUMP_PERCENT = 10n;

/** the least a replacement's fee field may be: 10 % above the replaced one's, rounded up */
export const replacementFloor = (price: bigint): bigint => (price * (100n + REPLACEMENT_BUMP_PERCENT) + 99n) / 100n;

/** whether `next` can replace `stuck` in a node's pool */
export const canReplace = (stuck: Eip1559Fees, next: Eip1559Fees): boolean =>
  next.maxFeePerGas >= replacementFloor(stuck.maxFeePerGas) && next.maxPriorityFeePerGas >= replacementFloor(stuck.maxPriorityFeePerGas) && next.maxPriorityFeePerGas <= next.maxFeePerGas;

const max = (a: bigint, b: bigint) => (a > b ? a : b);

/**
 * A stuck transaction's replacement fees: each field the higher of what the market asks now
 * (`market`, the chain's estimate) and the floor above the stuck one's; maxFeePerGas capped at the
 * chain's fee cap when the market asks more. Null when even the floor is above the cap: the
 * transaction cannot be replaced within the policy and waits for the base fee to fall.
 */
export const bumpedEip1559Fees = (stuck: Eip1559Fees, market: Eip1559Fees, cap?: bigint): Eip1559Fees | null => {
  const floor = { maxFeePerGas: replacementFloor(stuck.maxFeePerGas), maxPriorityFeePerGas: replacementFloor(stuck.maxPriorityFeePerGas) };
  let maxFeePerGas = max(floor.maxFeePerGas, market.maxFeePerGas);
  if (cap !== undefined && maxFeePerGas > cap) maxFeePerGas = cap;
  const maxPriorityFeePerGas = max(floor.maxPriorityFeePerGas, market.maxPriorityFeePerGas);
  const next = { maxFeePerGas, maxPriorityFeePerGas: maxPriorityFeePerGas < maxFeePerGas ? maxPriorityFeePerGas : maxFeePerGas };
  return canReplace(stuck, next) ? next : null;
};
