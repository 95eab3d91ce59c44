import { address, Transaction } from 'bitcoinjs-lib';
import type { ChainDefinition } from '../../catalog/chain.js';
import type { Signer, WalletRef } from '../signer/signer.js';
import { bitcoinNetwork } from './address.js';
import { DUST_LIMIT_SATS, type BitcoinOutput } from './transactions.js';

/**
 * Replace-by-fee (BIP125) for a withdrawal stuck in the mempool: the same inputs (so the two can
 * never both confirm and the recipient is paid once), the same recipient and amount, a higher fee
 * taken from the change. BIP125's rules 3 and 4: the replacement pays more than the original in
 * absolute terms, by at least the incremental relay fee (1 sat/vB) of its own size. Its inputs
 * carry nSequence 0xfffffffd, so it can itself be replaced again.
 */

export const BIP125_REPLACEABLE_SEQUENCE = 0xfffffffd;
export const INCREMENTAL_RELAY_SAT_PER_VBYTE = 1n;

export class CannotReplaceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CannotReplaceError';
  }
}

export interface StuckWithdrawal {
  chain: ChainDefinition;
  /** the signed transaction in the mempool */
  raw: string;
  /** the wallet and amount of each output it spends (from the gateway's outputs of the organization's wallets) */
  spentOutput(txHash: string, index: number): { wallet: WalletRef; amount: bigint } | undefined;
  /** the organization's change address: the output the higher fee comes from */
  changeAddress: string;
  feeRateSatPerVbyte: bigint;
}

export interface Replacement {
  raw: string;
  txHash: string;
  fee: bigint;
  replacedFee: bigint;
  outputs: BitcoinOutput[];
}

const sum = (amounts: readonly bigint[]) => amounts.reduce((total, amount) => total + amount, 0n);

export const replaceByFee = (signer: Signer, stuck: StuckWithdrawal): Replacement => {
  const { chain } = stuck;
  const original = Transaction.fromHex(stuck.raw);
  const inputs = original.ins.map((input) => {
    const txHash = Buffer.from(input.hash).reverse().toString('hex');
    const spent = stuck.spentOutput(txHash, input.index);
    if (!spent) throw new CannotReplaceError(`the output ${txHash}:${input.index} it spends is not one of the organization's`);
    return { wallet: spent.wallet, txHash, index: input.index, amount: spent.amount, sequence: BIP125_REPLACEABLE_SEQUENCE };
  });
  const outputs: BitcoinOutput[] = original.outs.map((output) => ({ address: address.fromOutputScript(output.script, bitcoinNetwork(chain.network)), amount: output.value }));
  const replacedFee = sum(inputs.map((input) => input.amount)) - sum(outputs.map((output) => output.amount));

  // a replacement has the original's shape, so its size is about the original's: a signature may be a
  // byte longer (a high R), and BIP125 rule 4 counts the replacement's own size, so it is measured once signed
  const virtualSize = BigInt(original.virtualSize());
  const changeIndex = outputs.findIndex((output) => output.address === stuck.changeAddress);
  if (changeIndex < 0) throw new CannotReplaceError('the transaction has no change output to pay a higher fee from');
  const signedAt = (fee: bigint) => {
    const change = outputs[changeIndex]!.amount - (fee - replacedFee);
    if (change < 0n) throw new CannotReplaceError(`the change (${outputs[changeIndex]!.amount} sat) cannot pay ${fee - replacedFee} sat more`);
    // change that would be dust goes to the miners too (it would cost more to spend than it holds)
    const replacementOutputs = change < DUST_LIMIT_SATS ? outputs.filter((_, index) => index !== changeIndex) : outputs.map((output, index) => (index === changeIndex ? { ...output, amount: change } : output));
    const { raw, txHash } = signer.signBitcoinTransfer(chain, inputs, replacementOutputs);
    const paidFee = sum(inputs.map((input) => input.amount)) - sum(replacementOutputs.map((output) => output.amount));
    return { raw, txHash, fee: paidFee, replacedFee, outputs: replacementOutputs };
  };
  let fee = [virtualSize * stuck.feeRateSatPerVbyte, replacedFee + virtualSize * INCREMENTAL_RELAY_SAT_PER_VBYTE].reduce((a, b) => (a > b ? a : b));
  for (let attempt = 0; ; attempt++) {
    const replacement = signedAt(fee);
    const least = replacedFee + BigInt(Transaction.fromHex(replacement.raw).virtualSize()) * INCREMENTAL_RELAY_SAT_PER_VBYTE;
    if (replacement.fee >= least || attempt >= 3) return replacement;
    fee = least; // re-signed, its size may move by a byte again
  }
};
