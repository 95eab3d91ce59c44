import type { ChainFamily } from '../../catalog/chain.js';
import type { FeeEstimate } from '../gateway.js';

/**
 * The devnet's fee schedule: fixed prices, so estimates, charges and tests agree to the unit.
 * `estimateFee` answers with it and mining charges by it.
 *
 * - EVM: base fee 1 gwei + tip 1 gwei per gas; 21 000 gas for a native transfer, 65 000 for an
 *   ERC-20 transfer. A transaction is charged gasUsed × (base + tip), capped by what it offers
 *   (gasLimit × maxFeePerGas); one offering less than that is refused like an underpriced one.
 * - Tron: a fixed resource cost burnt in TRX: 270 000 sun of bandwidth for a TRX transfer,
 *   13 995 000 sun (65 000 energy at 210 sun + 345 bytes of bandwidth) for a TRC-20 transfer.
 * - Bitcoin: what the inputs leave over the outputs; estimates assume 10 sat/vB for a P2WPKH
 *   transaction of one input and two outputs (141 vB); a node relays nothing under 1 sat/vB.
 * - XRP: the transaction's own Fee field; estimates say 12 drops, at least 10 are required.
 */
export const EVM_BASE_FEE_PER_GAS = 1_000_000_000n;
export const EVM_PRIORITY_FEE_PER_GAS = 1_000_000_000n;
export const EVM_NATIVE_TRANSFER_GAS = 21_000n;
export const EVM_TOKEN_TRANSFER_GAS = 65_000n;

export const TRON_NATIVE_TRANSFER_FEE_SUN = 270_000n;
export const TRON_TOKEN_TRANSFER_FEE_SUN = 13_995_000n;
/** the fee limit a TRC-20 transfer should carry: what it burns, with room (Tron's own wallets use up to 100 TRX) */
export const TRON_TOKEN_FEE_LIMIT_SUN = 30_000_000n;

export const BITCOIN_FEE_RATE_SAT_PER_VBYTE = 10n;
export const BITCOIN_MIN_RELAY_SAT_PER_VBYTE = 1n;
/** P2WPKH sizes (vbytes): overhead, per input, per output */
export const bitcoinVirtualSize = (inputs: number, outputs: number): bigint => 11n + 68n * BigInt(inputs) + 31n * BigInt(outputs);

export const XRP_FEE_DROPS = 12n;
export const XRP_MIN_FEE_DROPS = 10n;

const isNative = (asset: string) => asset === 'native';

/** What the devnet charges a transaction of the family that moves `asset`, where the price is fixed (EVM, Tron). */
export const scheduledFee = (family: ChainFamily, asset: string): bigint | null => {
  switch (family) {
    case 'evm':
      return (isNative(asset) ? EVM_NATIVE_TRANSFER_GAS : EVM_TOKEN_TRANSFER_GAS) * (EVM_BASE_FEE_PER_GAS + EVM_PRIORITY_FEE_PER_GAS);
    case 'tron':
      return isNative(asset) ? TRON_NATIVE_TRANSFER_FEE_SUN : TRON_TOKEN_TRANSFER_FEE_SUN;
    case 'bitcoin':
    case 'xrp':
      return null; // stated by the transaction itself
  }
};

/** FeeEstimate of one transfer of `asset`, with the parameters the family's signer takes. */
export const estimateTransferFee = (family: ChainFamily, asset: string): FeeEstimate => {
  switch (family) {
    case 'evm': {
      const gasLimit = isNative(asset) ? EVM_NATIVE_TRANSFER_GAS : EVM_TOKEN_TRANSFER_GAS;
      const maxFeePerGas = EVM_BASE_FEE_PER_GAS + EVM_PRIORITY_FEE_PER_GAS;
      return {
        fee: gasLimit * maxFeePerGas,
        parameters: { gasLimit: String(gasLimit), maxFeePerGas: String(maxFeePerGas), maxPriorityFeePerGas: String(EVM_PRIORITY_FEE_PER_GAS) },
      };
    }
    case 'tron': {
      const fee = scheduledFee('tron', asset)!;
      return { fee, parameters: { feeLimit: String(isNative(asset) ? 0n : TRON_TOKEN_FEE_LIMIT_SUN) } };
    }
    case 'bitcoin':
      return { fee: bitcoinVirtualSize(1, 2) * BITCOIN_FEE_RATE_SAT_PER_VBYTE, parameters: { feeRateSatPerVbyte: String(BITCOIN_FEE_RATE_SAT_PER_VBYTE) } };
    case 'xrp':
      return { fee: XRP_FEE_DROPS, parameters: { fee: String(XRP_FEE_DROPS) } };
  }
};
