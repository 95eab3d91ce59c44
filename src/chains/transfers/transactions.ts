import type { ChainDefinition } from '../../catalog/chain.js';
import { signedTransactionHash } from '../families.js';
import type { ChainGateway, FeeEstimate } from '../gateway.js';
import type { Signer, WalletRef } from '../signer/signer.js';
import type { SignedStep } from '../../domain/sweep/sweep.js';

/**
 * How long a signed Tron transaction stays valid. A step recorded signed but not broadcast (a
 * crash in between) must be sent again within it; a real node refuses it afterwards and the sweep
 * fails with the node's reason (the funds stay where they are).
 */
export const TRON_SWEEP_EXPIRATION_MS = 6 * 60 * 60 * 1000;

export interface TransferToSign {
  chain: ChainDefinition;
  wallet: WalletRef;
  from: string;
  to: string;
  /** 'native' or the token contract */
  asset: string;
  amount: bigint;
  estimate: FeeEstimate;
  now: Date;
  /** EVM: the lowest nonce it may take, one past every transaction of the wallet recorded and still in flight (the node may not know one of them yet) */
  nonceFloor?: number;
}

const parameter = (estimate: FeeEstimate, name: string): bigint => {
  const value = estimate.parameters[name];
  if (value === undefined) throw new Error(`the fee estimate has no ${name}`);
  return BigInt(value);
};

/**
 * Signs one transfer of a sweep or a withdrawal (EVM or Tron) from one of the service's wallets.
 * The nonce (EVM: the node's next, and never below `nonceFloor`) or the reference block (Tron)
 * comes from the gateway now; the hash from the family's codec, so
 * the step can be recorded before anything is sent.
 */
export const signSweepTransfer = async (signer: Signer, gateway: ChainGateway, transfer: TransferToSign): Promise<SignedStep> => {
  const { chain, wallet, from, to, asset, amount, estimate, now, nonceFloor = 0 } = transfer;
  // never sign from a key that does not hold the address the plan names
  if (signer.addressOf(chain, wallet).toLowerCase() !== from.toLowerCase()) throw new Error(`the ${wallet.branch} wallet ${wallet.index} does not hold ${from}`);
  let raw: string;
  let nonce: number | null = null;
  switch (chain.family) {
    case 'evm':
      nonce = Math.max(await gateway.nextNonce(from), nonceFloor);
      raw = signer.signEvmTransfer(chain, wallet, {
        to,
        asset,
        amount,
        nonce,
        gasLimit: parameter(estimate, 'gasLimit'),
        maxFeePerGas: parameter(estimate, 'maxFeePerGas'),
        maxPriorityFeePerGas: parameter(estimate, 'maxPriorityFeePerGas'),
      });
      break;
    case 'tron': {
      const head = await gateway.head();
      const timestamp = now.getTime();
      raw = signer.signTronTransfer(chain, wallet, {
        to,
        amount,
        ...(asset === 'native' ? {} : { trc20: { contract: asset, feeLimit: parameter(estimate, 'feeLimit') } }),
        refBlock: { number: head.number, hash: head.hash.replace(/^0x/, '') },
        timestamp,
        expiration: timestamp + TRON_SWEEP_EXPIRATION_MS,
      });
      break;
    }
    default:
      throw new Error(`${chain.id} is not swept`);
  }
  return { txHash: signedTransactionHash(chain, raw), raw, nonce, from, to, amount: amount.toString(), estimatedFee: estimate.fee.toString() };
};
