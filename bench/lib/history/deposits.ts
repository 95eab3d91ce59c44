import type { ChainDefinition } from '../../../src/catalog/chain.js';
import type { TokenDefinition } from '../../../src/catalog/tokens.js';
import { depositDecider, type DepositCommand } from '../../../src/domain/deposit/decide.js';
import { depositKey, type DepositRef } from '../../../src/domain/deposit/deposit.js';
import { streams } from '../../../src/domain/streams.js';
import { sweepDecider, type SweepCommand } from '../../../src/domain/sweep/decide.js';
import type { SignedStep, Sweep } from '../../../src/domain/sweep/sweep.js';
import { externalAddress } from '../organization.js';
import { blockAt, randomHex, transactionHash, type HistoryContext, type Steps } from './context.js';
import { depositAccount, walletsOn, type HistoryOrganization } from './organization.js';

/** A signed transaction's record: random bytes of a plausible size (nothing is ever sent). */
export const signedStep = (chain: ChainDefinition, fields: Omit<SignedStep, 'txHash' | 'raw'>): SignedStep => ({
  txHash: transactionHash(chain),
  raw: randomHex(chain.family === 'bitcoin' ? 220 : 115),
  ...fields,
});

const externalAddresses = new Map<string, string>();
/** the devnet's own external address on the chain (computed once): the depositors' wallet, the payouts' recipient */
export const outsideAddress = (chainId: string) => externalAddresses.get(chainId) ?? externalAddresses.set(chainId, externalAddress(chainId)).get(chainId)!;

/** the fee an EVM transfer of `gas` pays at 20 gwei */
export const evmFee = (gas: bigint) => gas * 20_000_000_000n;

/**
 * One deposit's life as the watcher and the sweeper record it: the depositor's account (on first
 * deposit), detected with the ledger's pending amount, confirmed with the credit, then on EVM swept
 * to the settlement wallet (a native sweep pays its fee from the deposit and charges it to the
 * ledger; a token sweep first gets its gas from the gas wallet). Answers the deposit's reference.
 */
export function* depositLifecycle(context: HistoryContext, organization: HistoryOrganization, chain: ChainDefinition, token: TokenDefinition, externalUserId: string, amount: bigint): Steps<DepositRef> {
  const { book } = context;
  const { orgId } = organization;
  const account = yield* depositAccount(context, organization, chain, externalUserId);
  const ref: DepositRef = { chainId: chain.id, txHash: transactionHash(chain), index: chain.family === 'bitcoin' ? Number(amount % 3n) : 0 };
  const depositStream = streams.deposit(ref.chainId, ref.txHash, ref.index);
  const watcher = { actor: `watcher:${chain.id}`, orgId };
  const detect: DepositCommand = {
    type: 'DetectDeposit',
    ...ref,
    tokenId: token.id,
    amount: amount.toString(),
    orgId,
    externalUserId,
    accountChainId: chain.id,
    toAddress: account.properties.address,
    destinationTag: null,
    senderAddress: outsideAddress(chain.id),
    blockNumber: blockAt(context, chain),
    blockHash: transactionHash(chain),
    credit: 'credit',
    ...(chain.family === 'evm' && token.kind !== 'native' ? { logIndexInTransaction: true as const } : {}),
  };
  const detected = depositDecider.decide(detect, depositDecider.initialState, { now: context.clock.now });
  yield { metadata: watcher, appends: [book.append(depositStream, detected), book.ledger(orgId, token.id, [{ type: 'AddPendingDeposit', orgId, tokenId: token.id, amount, deposit: ref }], context.clock.now)] };
  const confirmed = depositDecider.decide({ type: 'ConfirmDeposit', confirmations: chain.properties.confirmations }, detected.reduce(depositDecider.evolve, depositDecider.initialState), { now: context.clock.now });
  yield { metadata: watcher, appends: [book.append(depositStream, confirmed), book.ledger(orgId, token.id, [{ type: 'CreditDeposit', orgId, tokenId: token.id, amount, deposit: ref }], context.clock.now)] };
  if (chain.family === 'evm') yield* sweep(context, organization, chain, token, ref, account.derivation.index, account.properties.address, amount);
  return ref;
}

function* sweep(context: HistoryContext, organization: HistoryOrganization, chain: ChainDefinition, token: TokenDefinition, ref: DepositRef, depositIndex: number, depositAddress: string, amount: bigint): Steps {
  const { book } = context;
  const { orgId } = organization;
  const metadata = { actor: `sweeper:${chain.id}`, orgId };
  const wallets = yield* walletsOn(context, organization, chain, metadata.actor);
  const native = token.kind === 'native';
  const stream = streams.sweep(ref.chainId, ref.txHash, ref.index);
  let state: Sweep = sweepDecider.initialState;
  const record = (command: SweepCommand) => {
    const events = sweepDecider.decide(command, state, { now: context.clock.now });
    state = events.reduce(sweepDecider.evolve, state);
    return book.append(stream, events);
  };
  const plan = {
    ...ref,
    orgId,
    tokenId: token.id,
    kind: native ? ('native' as const) : ('token' as const),
    asset: native ? 'native' : token.address,
    amount: amount.toString(),
    depositAddress,
    depositIndex,
    settlementAddress: wallets.settlementAddress,
    walletIndex: wallets.index,
    gasWalletAddress: native ? null : wallets.gasAddress,
  };
  yield { metadata, appends: [record({ type: 'ScheduleSweep', plan })] };
  const fee = evmFee(native ? 21_000n : 65_000n);
  if (!native) {
    const topUp = signedStep(chain, { nonce: null, from: wallets.gasAddress!, to: depositAddress, amount: fee.toString(), estimatedFee: evmFee(21_000n).toString() });
    yield { metadata, appends: [record({ type: 'RecordTopUpSigned', step: topUp })] };
    yield { metadata, appends: [record({ type: 'RecordTopUpBroadcast' })] };
    yield { metadata, appends: [record({ type: 'RecordTopUpConfirmed', blockNumber: blockAt(context, chain), fee: evmFee(21_000n) })] };
  }
  const swept = signedStep(chain, { nonce: 0, from: depositAddress, to: wallets.settlementAddress, amount: (native ? amount - fee : amount).toString(), estimatedFee: fee.toString() });
  yield { metadata, appends: [record({ type: 'RecordSweepSigned', step: swept })] };
  yield { metadata, appends: [record({ type: 'RecordSweepBroadcast' })] };
  const confirmed = record({ type: 'RecordSweepConfirmed', blockNumber: blockAt(context, chain), fee, feeCharged: native ? fee : 0n });
  const charged = native ? [book.ledger(orgId, token.id, [{ type: 'ChargeFee', orgId, tokenId: token.id, amount: fee, reason: 'sweep', reference: `sweep:${depositKey(ref)}` }], context.clock.now)] : [];
  yield { metadata, appends: [confirmed, ...charged] };
}
