import type { WithdrawalRecord } from '../withdrawal/withdrawal.js';

/**
 * How a payout batch's network fee is shared among its withdrawals (Bitcoin: one transaction pays
 * many). Each withdrawal pays for the bytes of its own output and an equal share of the rest
 * (the transaction's overhead, its inputs, its change output): withdrawal i weighs
 * N × ownBytes(i) + (vsize − Σ ownBytes), out of N × vsize. Shares are rounded down and the
 * satoshis left over (fewer than N) go one each to the first withdrawals, so the shares add up to
 * the fee exactly: the ledger charges what the chain took, to the satoshi. A fee that rises (a
 * replacement) never lowers a share.
 */
export const shareFeeByOutputs = (fee: bigint, ownOutputBytes: readonly number[], virtualSize: number): bigint[] => {
  const count = BigInt(ownOutputBytes.length);
  if (count === 0n) throw new RangeError('a fee is shared among at least one withdrawal');
  if (fee < 0n) throw new RangeError(`a fee is not negative: ${fee}`);
  const own = ownOutputBytes.map(BigInt);
  const shared = BigInt(virtualSize) - own.reduce((total, bytes) => total + bytes, 0n);
  if (shared < 0n) throw new RangeError(`the outputs (${own.join(', ')} bytes) are larger than the transaction (${virtualSize} vbytes)`);
  const weights = own.map((bytes) => count * bytes + shared);
  const whole = count * BigInt(virtualSize);
  return distribute(fee, weights.map((weight) => (fee * weight) / whole));
};

/** An amount shared equally (a cancellation's fee, which pays for no one's output). */
export const shareFeeEqually = (fee: bigint, count: number): bigint[] => {
  if (count < 1) throw new RangeError('a fee is shared among at least one withdrawal');
  return distribute(fee, Array.from({ length: count }, () => fee / BigInt(count)));
};

/** the rounded-down shares, and what they leave of `fee` one satoshi each to the first */
const distribute = (fee: bigint, floors: bigint[]): bigint[] => {
  let left = fee - floors.reduce((total, share) => total + share, 0n);
  return floors.map((share) => {
    if (left <= 0n) return share;
    left--;
    return share + 1n;
  });
};

/**
 * The network fee charged to a withdrawal when `txHash` settles it: the whole fee the chain took for
 * a transaction of its own; its recorded share for a payout batch's (the shares add up to that fee).
 */
export const feeChargedFor = (withdrawal: WithdrawalRecord, txHash: string, chainFee: bigint): bigint => {
  const recorded = [withdrawal.signedTransaction, ...(withdrawal.replacedTransactions ?? [])].find((transaction) => transaction?.txHash === txHash);
  return recorded?.batch ? BigInt(recorded.fee) : chainFee;
};

/** A fee the chain took though the withdrawal was not paid (a cancellation's, a failed transaction's): a batch's withdrawals share it equally. */
export const failedFeeShareOf = (withdrawal: WithdrawalRecord, feePaid: bigint): bigint => {
  const batch = withdrawal.signedTransaction?.batch;
  if (!batch || feePaid === 0n) return feePaid;
  return shareFeeEqually(feePaid, batch.size)[batch.outputIndex] ?? 0n;
};
