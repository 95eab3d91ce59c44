import type { SweepServices } from '../sweeper/advance.js';

/** What a withdrawal processor works with is what a sweeper does: a chain, its gateway, the signer, the organizations' wallets. */
export type WithdrawalProcessingServices = SweepServices & {
  /** Bitcoin, EVM: blocks a broadcast withdrawal may stay unconfirmed before it is replaced at a higher fee (./replacement.ts); default 6 */
  replaceAfterBlocks?: number;
  /** EVM: the chain's fee cap (CHAINS_CONFIG `fees.maxFeePerGasGwei`), wei: a replacement never offers more */
  maxFeePerGas?: bigint;
};
