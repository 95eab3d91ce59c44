import type { Kysely } from 'kysely';
import type { Database } from '../../db/database.js';
import { accountDecider } from '../../domain/account/account.js';
import type { DerivationOwnerEvent } from '../../domain/derivation/derivation.js';
import { streams } from '../../domain/streams.js';
import type { SpentOutput, WithdrawalRecord } from '../../domain/withdrawal/withdrawal.js';
import type { EventStore } from '../../eventstore/port.js';
import { loadAggregate, toDomainEvent } from '../../application/command-handler.js';
import type { OrganizationWallets } from '../../application/organization-wallets.js';
import { BIP125_REPLACEABLE_SEQUENCE } from '../../chains/bitcoin/replace-by-fee.js';
import type { ChainDefinition } from '../../catalog/chain.js';
import { transactionCodecs } from '../../chains/families.js';
import type { ChainGateway } from '../../chains/gateway.js';
import type { Signer, WalletRef } from '../../chains/signer/signer.js';
import { NOTHING_IN_FLIGHT, type OrganizationInFlight } from './in-flight.js';
import { InsufficientFundsError, planBitcoinSpend, XRP_LEDGER_WINDOW, xrpDestination, type BitcoinSpendPlan, type SpendableOutput } from '../../chains/bitcoin/spend-planning.js';

export interface FamilyServices {
  chain: ChainDefinition;
  gateway: ChainGateway;
  signer: Signer;
  wallets: OrganizationWallets;
  store: EventStore;
  db: Kysely<Database>;
}

/** A withdrawal's transaction, signed and not yet sent: what WithdrawalTransactionSigned records. */
export interface SignedWithdrawal {
  raw: string;
  txHash: string;
  /** EVM nonce / XRP sequence; null for Bitcoin (its inputs are in `raw`) */
  nonce: number | null;
  /** the fee the transaction states or is estimated at, native base units */
  fee: bigint;
  /** Bitcoin, EVM: the head it was signed at; Bitcoin: the outputs it spends; EVM: its fee fields (what a replacement needs) */
  headBlockNumber?: number;
  inputs?: SpentOutput[];
  maxFeePerGas?: string;
  maxPriorityFeePerGas?: string;
}

/** The plan cannot be paid as things stand; `final`: it never will be (the withdrawal fails), else it waits. */
export class CannotPayError extends Error {
  constructor(
    message: string,
    readonly final: boolean,
  ) {
    super(message);
    this.name = 'CannotPayError';
  }
}

const ORGANIZATION_OWNER = '(organization)';

/** Bitcoin: the organization's wallets whose outputs pay its withdrawals (deposit addresses and its change address). */
export const bitcoinWalletsOf = async (services: FamilyServices, orgId: string): Promise<{ byAddress: Map<string, WalletRef>; changeAddress: string }> => {
  const { chain, db, store, signer, wallets } = services;
  const byAddress = new Map<string, WalletRef>();
  const accounts = await db.selectFrom('accounts').select(['external_user_id', 'address']).where('org_id', '=', orgId).where('chain_id', '=', chain.id).execute();
  for (const row of accounts) {
    const { state } = await loadAggregate(store, streams.account(orgId, chain.id, row.external_user_id), accountDecider);
    if (state.status !== 'Created') continue;
    const wallet: WalletRef = { branch: 'receive', index: state.derivation.index };
    // never hand the signer an output of an address it does not hold at that index
    if (signer.addressOf(chain, wallet) === row.address) byAddress.set(row.address, wallet);
  }
  const { index } = await wallets.walletsOf(orgId, chain.id, { actor: `withdrawal-processor:${chain.id}` });
  const change: WalletRef = { branch: 'service', index };
  const changeAddress = signer.addressOf(chain, change);
  byAddress.set(changeAddress, change);
  return { byAddress, changeAddress };
};

type BitcoinWallet = { ref: WalletRef; address: string };

/**
 * Bitcoin: what the organization can spend now (the confirmed outputs of its wallets), its change
 * address, and the fee rate the gateway asks for a payment to `to`.
 */
export const bitcoinSpendingOf = async (services: FamilyServices, orgId: string, to: string, amount: bigint) => {
  const { chain, gateway } = services;
  const { byAddress, changeAddress } = await bitcoinWalletsOf(services, orgId);
  const unspent = await gateway.unspentOutputs([...byAddress.keys()]);
  const spendable: SpendableOutput<BitcoinWallet>[] = unspent
    .filter((output) => output.confirmations >= chain.properties.confirmations && byAddress.has(output.address))
    .map((output) => ({ txHash: output.txHash, index: output.index, amount: output.amount, wallet: { ref: byAddress.get(output.address)!, address: output.address } }));
  const estimate = await gateway.estimateFee({ from: changeAddress, to, asset: 'native', amount });
  const feeRate = estimate.parameters.feeRateSatPerVbyte;
  if (feeRate === undefined) throw new Error('the Bitcoin fee estimate has no feeRateSatPerVbyte');
  return { spendable, changeAddress, feeRateSatPerVbyte: BigInt(feeRate) };
};

/** Bitcoin: a plan signed, its inputs signalling BIP125 replaceability, with the head it was signed at and the outputs it spends (what a replacement needs). */
export const signBitcoinPlan = async (services: FamilyServices, plan: BitcoinSpendPlan<BitcoinWallet>) => {
  const head = await services.gateway.head();
  const { raw, txHash } = services.signer.signBitcoinTransfer(
    services.chain,
    plan.inputs.map(({ wallet, txHash: hash, index, amount }) => ({ wallet: wallet.ref, txHash: hash, index, amount, sequence: BIP125_REPLACEABLE_SEQUENCE })),
    plan.outputs,
  );
  const inputs: SpentOutput[] = plan.inputs.map(({ wallet, txHash: hash, index, amount }) => ({ txHash: hash, index, amount: amount.toString(), address: wallet.address }));
  return { raw, txHash, headBlockNumber: head.number, inputs };
};

/**
 * Bitcoin: confirmed outputs of the organization's wallets, largest first, to the recipient and
 * the change back to the organization's change address; fee = vsize × the gateway's rate. Its
 * inputs signal BIP125 replaceability, so a transaction left unconfirmed can be replaced by one
 * paying more (replacement.ts).
 */
export const signBitcoinWithdrawal = async (services: FamilyServices, withdrawal: WithdrawalRecord): Promise<SignedWithdrawal> => {
  const amount = BigInt(withdrawal.amount);
  const { spendable, changeAddress, feeRateSatPerVbyte } = await bitcoinSpendingOf(services, withdrawal.orgId, withdrawal.recipient, amount);
  let plan;
  try {
    plan = planBitcoinSpend({ outputs: spendable, recipient: withdrawal.recipient, amount, feeRateSatPerVbyte, changeAddress });
  } catch (error) {
    if (error instanceof InsufficientFundsError || error instanceof RangeError) throw new CannotPayError(error.message, true);
    throw error;
  }
  const { raw, txHash, headBlockNumber, inputs } = await signBitcoinPlan(services, plan);
  return { raw, txHash, nonce: null, fee: plan.fee, headBlockNumber, inputs };
};

/** XRP: the organization's address is the receive child it holds in the XRP key space (where its users' deposits arrive, told apart by tag). */
export const xrpWalletOf = async (services: FamilyServices, orgId: string): Promise<{ wallet: WalletRef; address: string } | null> => {
  const { chain, store, signer } = services;
  const [assigned] = await store.readStream(streams.derivationOwner(chain.keySpace, orgId, ORGANIZATION_OWNER), { maxCount: 1 });
  if (!assigned) return null;
  const wallet: WalletRef = { branch: 'receive', index: toDomainEvent<DerivationOwnerEvent>(assigned).data.index };
  return { wallet, address: signer.addressOf(chain, wallet) };
};

/**
 * XRP: a Payment from the organization's address, the tag from `memo` or the X-address; only when
 * the amount and fee fit above the account reserve and what its other payments in flight spend
 * (while those are in flight it waits; with none, it cannot be paid). Sequence: the gateway's
 * next, and never one another recorded payment in flight holds (`inFlight.nonceFloor`).
 */
export const signXrpWithdrawal = async (services: FamilyServices, withdrawal: WithdrawalRecord, inFlight: OrganizationInFlight = NOTHING_IN_FLIGHT): Promise<SignedWithdrawal> => {
  const { chain, gateway, signer } = services;
  const sender = await xrpWalletOf(services, withdrawal.orgId);
  if (!sender) throw new CannotPayError('the organization has no XRP address (no deposit account on this chain)', true);
  let destination;
  try {
    destination = xrpDestination(withdrawal.recipient, withdrawal.memo, chain.network);
  } catch (error) {
    throw new CannotPayError((error as Error).message, true);
  }
  if (destination.tag === undefined && (await gateway.requiresDestinationTag(destination.classicAddress))) {
    throw new CannotPayError(`${destination.classicAddress} requires a destination tag; the withdrawal has none`, true);
  }
  const amount = BigInt(withdrawal.amount);
  const estimate = await gateway.estimateFee({ from: sender.address, to: destination.classicAddress, asset: 'native', amount });
  // The ledger never lets an account send its reserve (base + owner reserve × OwnerCount): the
  // gateway's balance is what is above it. A payment that would dip into it is not signed; like a
  // Bitcoin withdrawal its outputs cannot pay, it fails (the hold is released): no sweep will ever
  // refill this address, only new deposits, and the integrator can ask again for less.
  const spendable = await gateway.balance(sender.address, 'native');
  const committed = inFlight.committed('native');
  if (committed > 0n && spendable >= amount + estimate.fee && spendable < amount + estimate.fee + committed) {
    throw new CannotPayError(`the XRP account ${sender.address} can spend ${spendable} drops; its payments in flight spend ${committed} of them`, false);
  }
  if (spendable < amount + estimate.fee) {
    throw new CannotPayError(
      `the XRP account ${sender.address} can spend ${spendable} drops above its account reserve; the withdrawal needs ${amount + estimate.fee} drops (${amount} and a fee of ${estimate.fee})`,
      true,
    );
  }
  const sequence = Math.max(await gateway.nextNonce(sender.address), inFlight.nonceFloor);
  const head = await gateway.head();
  const raw = signer.signXrpPayment(chain, sender.wallet, {
    destination: destination.classicAddress,
    amountDrops: amount,
    ...(destination.tag !== undefined ? { destinationTag: destination.tag } : {}),
    fee: estimate.fee,
    sequence,
    lastLedgerSequence: head.number + XRP_LEDGER_WINDOW,
  });
  const { hash } = transactionCodecs.xrp.decodeSignedTransaction(raw, { chain });
  return { raw, txHash: hash, nonce: sequence, fee: estimate.fee };
};
