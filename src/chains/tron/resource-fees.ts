import { z } from 'zod';

/**
 * What a Tron transfer burns, from the sender's resources (getaccountresource) and the network's
 * prices (getchainparameters). Tron charges bandwidth per byte of the signed transaction and energy
 * per unit of contract execution; an account's free and staked resources pay first, TRX is burnt
 * for the rest.
 */

/** bytes a signed transfer occupies (with the 64-byte result reserve): TRX ≈ 266, TRC-20 transfer ≈ 345; rounded up */
export const TRX_TRANSFER_BYTES = 270n;
export const TRC20_TRANSFER_BYTES = 345n;
/** headroom of the fee limit over the estimated energy (dynamic energy can rise between estimate and execution) */
const FEE_LIMIT_PERCENT = 120n;

/** getchainparameters: `{ chainParameter: [{ key, value? }] }` (protobuf JSON leaves out zero values) */
export const chainParametersSchema = z.object({ chainParameter: z.array(z.object({ key: z.string(), value: z.number().optional() })) });

export interface TronPrices {
  /** sun per byte of bandwidth */
  transactionFee: bigint;
  /** sun per unit of energy */
  energyFee: bigint;
  /** sun burnt for the bandwidth of an account-creating transfer when staked bandwidth does not cover it */
  createAccountFee: bigint;
  /** sun a transfer to a not-yet-existing account pays for creating it */
  createNewAccountFee: bigint;
}

export const tronPrices = (parameters: z.infer<typeof chainParametersSchema>): TronPrices => {
  const value = (key: string) => {
    const found = parameters.chainParameter.find((parameter) => parameter.key === key);
    if (!found) throw new Error(`the node's chain parameters have no ${key}`);
    return BigInt(found.value ?? 0);
  };
  return {
    transactionFee: value('getTransactionFee'),
    energyFee: value('getEnergyFee'),
    createAccountFee: value('getCreateAccountFee'),
    createNewAccountFee: value('getCreateNewAccountFeeInSystemContract'),
  };
};

/** getaccountresource; `{}` for an account that does not exist (every field absent means 0) */
export const accountResourceSchema = z.object({
  freeNetUsed: z.number().optional(),
  freeNetLimit: z.number().optional(),
  NetUsed: z.number().optional(),
  NetLimit: z.number().optional(),
  EnergyUsed: z.number().optional(),
  EnergyLimit: z.number().optional(),
});

const remaining = (limit: number | undefined, used: number | undefined) => {
  const left = BigInt(limit ?? 0) - BigInt(used ?? 0);
  return left > 0n ? left : 0n;
};

export interface TronFeeInputs {
  prices: TronPrices;
  resources: z.infer<typeof accountResourceSchema>;
  /** TRC-20: the energy the node's dry run (triggerconstantcontract) used; absent for TRX */
  energy?: bigint;
  /** TRX: the recipient does not exist yet, the transfer creates it */
  createsAccount?: boolean;
}

/** The TRX the sender burns (`fee`) and the fee limit a TRC-20 transfer must carry. */
export const tronTransferCost = ({ prices, resources, energy, createsAccount = false }: TronFeeInputs): { fee: bigint; feeLimit: bigint } => {
  const bytes = energy === undefined ? TRX_TRANSFER_BYTES : TRC20_TRANSFER_BYTES;
  const stakedBandwidth = remaining(resources.NetLimit, resources.NetUsed);
  const freeBandwidth = remaining(resources.freeNetLimit, resources.freeNetUsed);
  let bandwidthFee: bigint;
  if (createsAccount) {
    // creating an account cannot use the free daily bandwidth: staked bandwidth, or the creation fee burnt
    bandwidthFee = prices.createNewAccountFee + (stakedBandwidth >= bytes ? 0n : prices.createAccountFee);
  } else {
    // bandwidth is all-or-nothing: if neither pool covers the whole transaction, all its bytes are burnt
    bandwidthFee = stakedBandwidth >= bytes || freeBandwidth >= bytes ? 0n : bytes * prices.transactionFee;
  }
  if (energy === undefined) return { fee: bandwidthFee, feeLimit: 0n };
  const burntEnergy = energy - remaining(resources.EnergyLimit, resources.EnergyUsed);
  const energyFee = (burntEnergy > 0n ? burntEnergy : 0n) * prices.energyFee;
  // the limit caps what execution may burn: the whole estimate at today's price, with headroom
  const feeLimit = (energy * prices.energyFee * FEE_LIMIT_PERCENT + 99n) / 100n;
  return { fee: bandwidthFee + energyFee, feeLimit };
};

/** A TRC-20 transfer whose energy, at today's price, costs more than the fee policy lets its fee_limit be. */
export class FeeLimitExceededError extends Error {
  constructor(
    readonly energyCostSun: bigint,
    readonly maxFeeLimitSun: bigint,
  ) {
    super(`the TRC-20 transfer's energy costs ${energyCostSun} sun, above the fee policy's maxFeeLimitSun of ${maxFeeLimitSun}: not signed, estimated again later`);
    this.name = 'FeeLimitExceededError';
  }
}

/**
 * The fee policy's ceiling on a TRC-20 fee_limit: the headroom is cut to fit under it, but a limit
 * below the energy the dry run used would only make the transfer run out of energy on chain and
 * burn the limit for nothing, so that is refused (FeeLimitExceededError). `energyCostSun` is all
 * the transfer's energy at today's price (what it burns without staked energy).
 */
export const cappedFeeLimit = (cost: { fee: bigint; feeLimit: bigint }, energyCostSun: bigint, maxFeeLimitSun: number | undefined): { fee: bigint; feeLimit: bigint } => {
  if (maxFeeLimitSun === undefined) return cost;
  const ceiling = BigInt(maxFeeLimitSun);
  if (energyCostSun > ceiling) throw new FeeLimitExceededError(energyCostSun, ceiling);
  return { fee: cost.fee, feeLimit: cost.feeLimit > ceiling ? ceiling : cost.feeLimit };
};
