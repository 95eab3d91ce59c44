import type { SignedTransaction, SpentOutput, WithdrawalRecord } from '../../domain/withdrawal/withdrawal.js';
import { CannotReplaceError, replaceByFee, type Replacement } from '../../chains/bitcoin/replace-by-fee.js';
import type { WalletRef } from '../../chains/signer/signer.js';
import { bitcoinWalletsOf, type FamilyServices } from './transactions.js';

/**
 * The replace-by-fee rule for Bitcoin withdrawals: a broadcast transaction still unconfirmed
 * `replaceAfterBlocks` blocks after it was signed (default 6, about an hour) is replaced by one
 * spending the same inputs and paying the recipient the same amount, at the node's current fee
 * rate but at least 1 sat/vB more than it (BIP125 rules 3 and 4), the difference taken from the
 * change. A replacement counts its blocks afresh, so a withdrawal still stuck is bumped again.
 */
export const DEFAULT_REPLACE_AFTER_BLOCKS = 6;

/**
 * Whether the transaction followed has waited long enough unconfirmed to be replaced; one recorded
 * without its head and inputs (Bitcoin) or fee fields (EVM), before these rules existed, never is.
 */
export const isStuck = (signed: SignedTransaction, headNumber: number, replaceAfterBlocks: number): boolean =>
  signed.headBlockNumber !== undefined && (signed.inputs !== undefined || signed.maxFeePerGas !== undefined) && headNumber - signed.headBlockNumber >= replaceAfterBlocks;

export interface SignedReplacement {
  raw: string;
  txHash: string;
  fee: bigint;
  headBlockNumber: number;
  inputs: SpentOutput[];
}

/**
 * Signs a BIP125 replacement of an organization's transaction spending `stuck.inputs`: every output
 * kept but the change, which pays the higher fee; priced for a payment of `amount` to `to`.
 * CannotReplaceError when its change cannot pay more or an input is not the organization's.
 */
export const signReplacementOf = async (services: FamilyServices, orgId: string, stuck: { raw: string; inputs: SpentOutput[] }, to: string, amount: bigint): Promise<Replacement> => {
  const { chain, gateway, signer } = services;
  const { byAddress, changeAddress } = await bitcoinWalletsOf(services, orgId);
  const spent = new Map(stuck.inputs.map((input) => [`${input.txHash}:${input.index}`, input]));
  const spentOutput = (txHash: string, index: number): { wallet: WalletRef; amount: bigint } | undefined => {
    const input = spent.get(`${txHash}:${index}`);
    const wallet = input && byAddress.get(input.address);
    return input && wallet ? { wallet, amount: BigInt(input.amount) } : undefined;
  };
  const estimate = await gateway.estimateFee({ from: changeAddress, to, asset: 'native', amount });
  const feeRate = estimate.parameters.feeRateSatPerVbyte;
  if (feeRate === undefined) throw new Error('the Bitcoin fee estimate has no feeRateSatPerVbyte');
  return replaceByFee(signer, { chain, raw: stuck.raw, spentOutput, changeAddress, feeRateSatPerVbyte: BigInt(feeRate) });
};

/** Signs the replacement of the withdrawal's transaction; CannotReplaceError when its change cannot pay more or an input is not the organization's. */
export const signBitcoinReplacement = async (services: FamilyServices, withdrawal: WithdrawalRecord, stuck: SignedTransaction & { inputs: SpentOutput[] }, headNumber: number): Promise<SignedReplacement> => {
  const replacement = await signReplacementOf(services, withdrawal.orgId, stuck, withdrawal.recipient, BigInt(withdrawal.amount));
  // the helper keeps every output but the change; a guard all the same: the recipient is paid the same, once
  const paid = replacement.outputs.filter((output) => output.address === withdrawal.recipient).reduce((total, output) => total + output.amount, 0n);
  if (paid !== BigInt(withdrawal.amount)) throw new CannotReplaceError(`the replacement would pay the recipient ${paid}, not ${withdrawal.amount}`);
  return { raw: replacement.raw, txHash: replacement.txHash, fee: replacement.fee, headBlockNumber: headNumber, inputs: stuck.inputs };
};
