import type { SweepServices } from '../sweeper/advance.js';

/** How large an organization's gas buffer is kept on an EVM or Tron chain, in payments at the current fee estimate (./gas-buffer.ts). */
export interface GasBufferPolicy {
  /** a top-up pays for this many withdrawals */
  payments: number;
  /** the next top-up is sent when what is left pays for fewer than this many */
  lowWaterPayments: number;
}

/** What a withdrawal processor works with is what a sweeper does: a chain, its gateway, the signer, the organizations' wallets. */
export type WithdrawalProcessingServices = SweepServices & {
  /** Bitcoin, EVM: blocks a broadcast withdrawal may stay unconfirmed before it is replaced at a higher fee (./replacement.ts); default 6 */
  replaceAfterBlocks?: number;
  /** EVM: the chain's fee cap (CHAINS_CONFIG `fees.maxFeePerGasGwei`), wei: a replacement never offers more */
  maxFeePerGas?: bigint;
  /** EVM, Tron: the settlement wallets' gas buffer (./gas-buffer.ts); absent: each withdrawal gets a top-up of exactly its fee */
  gasBuffer?: GasBufferPolicy;
};
