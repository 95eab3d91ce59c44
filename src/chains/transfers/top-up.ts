import type { ChainDefinition } from '../../catalog/chain.js';
import type { ChainGateway } from '../gateway.js';
import type { Signer } from '../signer/signer.js';
import type { SignedStep } from '../../domain/sweep/sweep.js';
import { signSweepTransfer } from './transactions.js';

export type GasTopUp =
  /** the gas wallet cannot pay the shortfall and its own fee: the caller records that it waits */
  | { kind: 'wait'; required: bigint; available: bigint }
  /** the gas wallet has a top-up of another job in flight (one nonce at a time) */
  | { kind: 'busy' }
  /** signed, not sent: the caller records it before anything broadcasts it */
  | { kind: 'signed'; step: SignedStep };

/**
 * The gas top-up step shared by sweeps and withdrawals (EVM, Tron): a wallet of the service lacks
 * `shortfall` native units to pay a transaction's fee, so the organization's gas wallet sends them.
 * Signs the top-up when the gas wallet can pay it and its own fee; never broadcasts (the caller
 * records the step first).
 */
export const prepareGasTopUp = async (
  signer: Signer,
  gateway: ChainGateway,
  request: { chain: ChainDefinition; walletIndex: number; gasAddress: string; to: string; shortfall: bigint; gasWalletBusy: boolean; now: Date },
): Promise<GasTopUp> => {
  const { chain, walletIndex, gasAddress, to, shortfall, gasWalletBusy, now } = request;
  // nothing lacking (a Tron transfer that free bandwidth covers costs 0): a top-up of nothing is no
  // transaction a node takes (a TRX transfer of 0 is invalid); the caller signs its transfer instead
  if (shortfall <= 0n) throw new RangeError(`a gas top-up needs a positive shortfall, not ${shortfall}: with nothing lacking, no top-up is sent`);
  const estimate = await gateway.estimateFee({ from: gasAddress, to, asset: 'native', amount: shortfall });
  const available = await gateway.balance(gasAddress, 'native');
  const required = shortfall + estimate.fee;
  if (available < required) return { kind: 'wait', required, available };
  if (gasWalletBusy) return { kind: 'busy' };
  const step = await signSweepTransfer(signer, gateway, { chain, wallet: { branch: 'gas', index: walletIndex }, from: gasAddress, to, asset: 'native', amount: shortfall, estimate, now });
  return { kind: 'signed', step };
};
