import type { SweepServices } from '../sweeper/advance.js';

/** What a withdrawal processor works with is what a sweeper does: a chain, its gateway, the signer, the organizations' wallets. */
export type WithdrawalProcessingServices = SweepServices & {
  /** Bitcoin: blocks a broadcast withdrawal may stay unconfirmed before it is replaced by fee (./replacement.ts); default 6 */
  replaceAfterBlocks?: number;
};
