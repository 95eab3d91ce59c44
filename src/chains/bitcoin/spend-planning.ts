import { DUST_LIMIT_SATS, type BitcoinOutput } from './transactions.js';
import type { ChainNetwork } from '../../catalog/chain.js';
import { parseXrpRecipient } from '../xrp/address.js';

/**
 * The pure part of withdrawal processing: which coins pay a Bitcoin withdrawal and what it costs,
 * where an XRP payment goes. No I/O, so every rule here is unit-tested on its own.
 */

/** A spendable output of one of the organization's Bitcoin wallets (the wallet is the caller's handle for the signer). */
export interface SpendableOutput<Wallet> {
  txHash: string;
  index: number;
  amount: bigint;
  wallet: Wallet;
}

export interface BitcoinSpendPlan<Wallet> {
  inputs: SpendableOutput<Wallet>[];
  outputs: BitcoinOutput[];
  /** what the inputs leave over the outputs: the organization pays it, from its BTC balance */
  fee: bigint;
}

/** P2WPKH virtual size (vbytes): overhead, per input, per output (the same measure the devnet and estimates use). */
export const p2wpkhVirtualSize = (inputs: number, outputs: number): bigint => 11n + 68n * BigInt(inputs) + 31n * BigInt(outputs);

const sum = (amounts: readonly bigint[]) => amounts.reduce((total, amount) => total + amount, 0n);

export class InsufficientFundsError extends Error {
  constructor(
    readonly needed: bigint,
    readonly available: bigint,
  ) {
    super(`the organization's confirmed outputs hold ${available} sat; the withdrawal needs ${needed} sat with its fee`);
    this.name = 'InsufficientFundsError';
  }
}

/** One payment of a plan: who is paid how much. */
export interface BitcoinPayment {
  recipient: string;
  amount: bigint;
}

/**
 * Largest-first coin selection: as few inputs as possible (each costs 68 vB), fee = vsize × rate.
 * One output per payment, in the order given, then the change back to the organization unless it
 * would be dust, in which case the fee takes it (the change output would cost more to spend than it
 * holds). Outputs are taken in a stable order (amount, then txid:index) so the same outputs give
 * the same transaction.
 */
export const planBitcoinPayouts = <Wallet>(request: {
  outputs: readonly SpendableOutput<Wallet>[];
  payments: readonly BitcoinPayment[];
  feeRateSatPerVbyte: bigint;
  changeAddress: string;
}): BitcoinSpendPlan<Wallet> => {
  const { payments, feeRateSatPerVbyte, changeAddress } = request;
  if (payments.length === 0) throw new RangeError('a plan pays at least one recipient');
  for (const { amount } of payments) if (amount < DUST_LIMIT_SATS) throw new RangeError(`${amount} sat is below the dust limit of ${DUST_LIMIT_SATS} sat`);
  if (feeRateSatPerVbyte <= 0n) throw new RangeError('the fee rate must be positive');
  const amount = sum(payments.map((payment) => payment.amount));
  const paid: BitcoinOutput[] = payments.map(({ recipient, amount: paying }) => ({ address: recipient, amount: paying }));
  const candidates = [...request.outputs].sort((a, b) =>
    a.amount !== b.amount ? (a.amount > b.amount ? -1 : 1) : `${a.txHash}:${a.index}`.localeCompare(`${b.txHash}:${b.index}`),
  );
  const inputs: SpendableOutput<Wallet>[] = [];
  for (const output of candidates) {
    inputs.push(output);
    const total = sum(inputs.map((input) => input.amount));
    const feeWithChange = p2wpkhVirtualSize(inputs.length, payments.length + 1) * feeRateSatPerVbyte;
    const change = total - amount - feeWithChange;
    if (change >= DUST_LIMIT_SATS) {
      return { inputs, outputs: [...paid, { address: changeAddress, amount: change }], fee: feeWithChange };
    }
    const feeWithoutChange = p2wpkhVirtualSize(inputs.length, payments.length) * feeRateSatPerVbyte;
    if (total - amount >= feeWithoutChange) {
      return { inputs, outputs: paid, fee: total - amount };
    }
  }
  const available = sum(candidates.map((output) => output.amount));
  throw new InsufficientFundsError(amount + p2wpkhVirtualSize(Math.max(1, candidates.length), payments.length) * feeRateSatPerVbyte, available);
};

/** One withdrawal's plan: the recipient's output, then the change. */
export const planBitcoinSpend = <Wallet>(request: {
  outputs: readonly SpendableOutput<Wallet>[];
  recipient: string;
  amount: bigint;
  feeRateSatPerVbyte: bigint;
  changeAddress: string;
}): BitcoinSpendPlan<Wallet> => {
  const { outputs, recipient, amount, feeRateSatPerVbyte, changeAddress } = request;
  return planBitcoinPayouts({ outputs, payments: [{ recipient, amount }], feeRateSatPerVbyte, changeAddress });
};

/**
 * Where an XRP payment goes: the classic account, and the destination tag from `memo` or the
 * X-address. Both stating different tags is refused rather than guessed.
 */
export const xrpDestination = (recipient: string, memo: string | null, network: ChainNetwork): { classicAddress: string; tag: number | undefined } => {
  const parsed = parseXrpRecipient(recipient, network);
  let memoTag: number | null = null;
  if (memo !== null && memo.trim() !== '') {
    if (!/^\d{1,10}$/.test(memo.trim()) || Number(memo.trim()) > 0xffffffff) throw new RangeError(`the memo of an XRP withdrawal is a destination tag (0 to 4294967295), not "${memo}"`);
    memoTag = Number(memo.trim());
  }
  if (parsed.tag !== null && memoTag !== null && parsed.tag !== memoTag) {
    throw new RangeError(`the X-address carries destination tag ${parsed.tag} but the memo says ${memoTag}`);
  }
  const tag = parsed.tag ?? memoTag;
  return { classicAddress: parsed.classicAddress, tag: tag ?? undefined };
};

/** How many ledgers a signed XRP payment stays valid: a crash and restart re-sends it well within, and a lost one expires. */
export const XRP_LEDGER_WINDOW = 1000;
