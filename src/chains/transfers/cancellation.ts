import { Transaction as BitcoinTransaction } from 'bitcoinjs-lib';
import { Transaction as EvmTransaction } from 'ethers';
import type { ChainDefinition } from '../../catalog/chain.js';
import { BIP125_REPLACEABLE_SEQUENCE } from '../bitcoin/replace-by-fee.js';
import { DUST_LIMIT_SATS } from '../bitcoin/transactions.js';
import { evmTransactionHash } from '../evm/transactions.js';
import type { Signer, WalletRef } from '../signer/signer.js';
import type { RecordedTransaction } from './follow.js';

/** An EVM zero-value transfer to oneself: 21,000 gas. */
const SELF_TRANSFER_GAS = 21_000n;
/** What a one-input, one-output P2WPKH transaction weighs, rounded up (vbytes). */
const ONE_INPUT_ONE_OUTPUT_VBYTES = 110n;
/** The fee rate a Bitcoin cancellation offers at least, above the refused transaction's own fee. */
const CANCELLATION_SAT_PER_VBYTE = 2n;

/** Who can sign a cancellation of a refused transaction: the wallet that sent it. */
export type CancellationSender =
  /** EVM: the sending wallet takes the nonce back with a transfer of nothing to itself */
  | { family: 'evm'; wallet: WalletRef; address: string }
  /** Bitcoin: one input is spent back to the organization's change address */
  | { family: 'bitcoin'; inputs: readonly { txHash: string; index: number; address: string; amount: string }[]; walletOf: (address: string) => WalletRef | undefined; changeAddress: string; refusedFee: bigint }
  /** XRP (LastLedgerSequence) and Tron (expiration): nothing to sign, they expire by themselves */
  | { family: 'expires' };

/**
 * Signs the transaction that makes a refused one impossible, or null when the chain lets it expire
 * (or no cancellation can be paid: then it stays followed, and reported if it lasts).
 * EVM: same nonce, same fee caps (the refused one is in no mempool of ours, so nothing to outbid;
 * were it in another node's, whichever is mined decides, and both outcomes are followed).
 * Bitcoin: its first input back to ourselves, paying more than it did (BIP125).
 */
export const signCancellation = (chain: ChainDefinition, signer: Signer, refused: RecordedTransaction, sender: CancellationSender): RecordedTransaction | null => {
  switch (sender.family) {
    case 'evm': {
      const original = EvmTransaction.from(refused.raw);
      const raw = signer.signEvmTransfer(chain, sender.wallet, {
        to: sender.address,
        asset: 'native',
        amount: 0n,
        nonce: original.nonce,
        gasLimit: SELF_TRANSFER_GAS,
        maxFeePerGas: original.maxFeePerGas ?? original.gasPrice ?? 0n,
        maxPriorityFeePerGas: original.maxPriorityFeePerGas ?? original.gasPrice ?? 0n,
      });
      return { txHash: evmTransactionHash(raw), raw, nonce: original.nonce, from: sender.address };
    }
    case 'bitcoin': {
      const input = sender.inputs[0];
      const wallet = input && sender.walletOf(input.address);
      if (!input || !wallet) return null;
      const fee = sender.refusedFee + ONE_INPUT_ONE_OUTPUT_VBYTES * CANCELLATION_SAT_PER_VBYTE;
      const amount = BigInt(input.amount) - fee;
      if (amount < DUST_LIMIT_SATS) return null;
      const { raw, txHash } = signer.signBitcoinTransfer(
        chain,
        [{ wallet, txHash: input.txHash, index: input.index, amount: BigInt(input.amount), sequence: BIP125_REPLACEABLE_SEQUENCE }],
        [{ address: sender.changeAddress, amount }],
      );
      BitcoinTransaction.fromHex(raw); // a signer bug must not be recorded
      return { txHash, raw, nonce: null, from: input.address };
    }
    case 'expires':
      return null;
  }
};
