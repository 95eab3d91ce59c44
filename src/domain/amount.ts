import { DomainError } from '../errors.js';

/** The largest amount on any chain ledgergate speaks (an EVM uint256). */
export const MAX_AMOUNT = (1n << 256n) - 1n;

/**
 * CONTRACT §6: an amount on the wire is the decimal string of a positive integer in base units, at
 * most 2^256−1. "0", negatives, decimals, exponents, a leading "+" or zero are INVALID_AMOUNT.
 */
export const parseAmount = (amount: string): bigint => {
  const value = /^[1-9][0-9]{0,77}$/.test(amount) ? BigInt(amount) : 0n;
  if (value <= 0n || value > MAX_AMOUNT) {
    throw new DomainError('INVALID_AMOUNT', 'amount must be a decimal string of a positive integer in base units (at most 2^256−1)', { amount });
  }
  return value;
};
