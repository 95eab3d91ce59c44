import { randomUUID } from 'node:crypto';
import type { CommandMetadata, DecidedAppend } from '../../../src/application/command-handler.js';
import type { ChainDefinition } from '../../../src/catalog/chain.js';
import type { TokenDefinition } from '../../../src/catalog/tokens.js';
import { gasTopUpDecider, type GasTopUpCommand, type GasTopUpState } from '../../../src/domain/gas-top-up/gas-top-up.js';
import type { LedgerCommand } from '../../../src/domain/ledger/decide.js';
import { streams } from '../../../src/domain/streams.js';
import { totpUseDecider } from '../../../src/domain/totp-use/totp-use.js';
import { withdrawalDecider, type WithdrawalCommand } from '../../../src/domain/withdrawal/decide.js';
import { ledgerCommandsFor } from '../../../src/domain/withdrawal/ledger-effects.js';
import { withdrawalReferenceClaimed } from '../../../src/domain/withdrawal/reference-claim.js';
import type { SpentOutput, Withdrawal } from '../../../src/domain/withdrawal/withdrawal.js';
import { timeStep } from '../../../src/security/totp.js';
import { blockAt, type HistoryContext, type Steps } from './context.js';
import { evmFee, outsideAddress, signedStep } from './deposits.js';
import { walletsOn, type HistoryOrganization, type HistoryUser } from './organization.js';

export type WithdrawalOutcome = 'completed' | 'failed' | 'cancelled';

const asPerson = (organization: HistoryOrganization, user: HistoryUser): CommandMetadata => ({ actor: user.userId, orgId: organization.orgId, credential: 'person', username: user.username });
const asApiKey = (organization: HistoryOrganization): CommandMetadata => ({ ...asPerson(organization, organization.users[0]!), credential: 'api-key' });

/** A person's TOTP code accepted (to log in, or to approve): each one a later time step than the last. */
const acceptTotp = (context: HistoryContext, organization: HistoryOrganization, user: HistoryUser, purpose: 'login' | 'approval'): DecidedAppend => {
  const last = organization.totpSteps.get(user.userId) ?? null;
  const step = Math.max(timeStep(context.clock.now), (last ?? 0) + 1);
  const events = totpUseDecider.decide({ type: 'AcceptTotpCode', userId: user.userId, timeStep: step, purpose }, { lastAcceptedStep: last }, { now: context.clock.now });
  organization.totpSteps.set(user.userId, step);
  return context.book.append(streams.totpUse(user.userId), events);
};

/** Bitcoin: what the organization's balance pays the network for a payout */
const BITCOIN_FEE = 2_800n;

/**
 * One withdrawal's life as POST /withdrawals, the approvers and the withdrawal processor record it:
 * requested with its reference claimed and its amount held; approved by the second person where
 * the organization asks for two (a login and an approval code each accepted once), or cancelled;
 * then on EVM the settlement wallet's gas topped up from the gas wallet, the transaction signed
 * (Bitcoin: its fee held beside the amount, its inputs the organization's deposits), broadcast,
 * and completed (the hold posted; Bitcoin: the fee charged) or failed (all held released).
 */
export function* withdrawalLifecycle(context: HistoryContext, organization: HistoryOrganization, chain: ChainDefinition, token: TokenDefinition, amount: bigint, outcome: WithdrawalOutcome, inputs: SpentOutput[] = []): Steps {
  const { book } = context;
  const { orgId } = organization;
  const id = randomUUID();
  let state: Withdrawal = withdrawalDecider.initialState;
  /** the command decided on the withdrawal, its ledger effects (and `extra`) decided on the ledger, in one append */
  const apply = (command: WithdrawalCommand, extra: LedgerCommand[] = []): DecidedAppend[] => {
    const events = withdrawalDecider.decide(command, state, { now: context.clock.now });
    const ledger = [...ledgerCommandsFor(state, events), ...extra];
    state = events.reduce(withdrawalDecider.evolve, state);
    return [book.append(streams.withdrawal(id), events), ...(ledger.length ? [book.ledger(orgId, token.id, ledger, context.clock.now)] : [])];
  };

  const reference = `payout-${id.slice(0, 13)}`;
  const owner = organization.users[0]!;
  const request: WithdrawalCommand = {
    type: 'RequestWithdrawal',
    id,
    orgId,
    chainId: chain.id,
    tokenId: token.id,
    amount: amount.toString(),
    recipient: outsideAddress(chain.id),
    memo: null,
    reference,
    internalNote: '',
    externalUserId: `customer-${Number(amount % 40n)}`,
    initiator: owner.userId,
    minWithdrawalSigners: organization.minWithdrawalSigners,
  };
  const requested = withdrawalDecider.decide(request, state, { now: context.clock.now });
  state = requested.reduce(withdrawalDecider.evolve, state);
  yield {
    metadata: asApiKey(organization),
    appends: [
      book.append(streams.withdrawalReference(orgId, reference), [withdrawalReferenceClaimed(orgId, reference, id, context.clock.now)]),
      book.ledger(orgId, token.id, [{ type: 'HoldFunds', orgId, tokenId: token.id, amount, withdrawalId: id }], context.clock.now),
      book.append(streams.withdrawal(id), requested),
    ],
  };

  const approver = organization.users[1]!;
  if (outcome === 'cancelled') {
    yield { metadata: asPerson(organization, approver), appends: [acceptTotp(context, organization, approver, 'login')] };
    return yield { metadata: asPerson(organization, approver), appends: apply({ type: 'CancelWithdrawal', id, userId: approver.userId, username: approver.username }) };
  }
  if (organization.minWithdrawalSigners > 1) {
    yield { metadata: asPerson(organization, approver), appends: [acceptTotp(context, organization, approver, 'login')] };
    yield { metadata: asPerson(organization, approver), appends: [acceptTotp(context, organization, approver, 'approval')] };
    yield { metadata: asPerson(organization, approver), appends: apply({ type: 'ApproveWithdrawal', id, userId: approver.userId }) };
  }

  const processor = { actor: `withdrawal-processor:${chain.id}`, orgId };
  const wallets = yield* walletsOn(context, organization, chain, processor.actor);
  const bitcoin = chain.family === 'bitcoin';
  const fee = bitcoin ? BITCOIN_FEE : evmFee(token.kind === 'native' ? 21_000n : 65_000n);
  if (!bitcoin) yield* gasTopUp(context, id, chain, wallets, fee, processor);
  const signed = signedStep(chain, { nonce: bitcoin ? null : 0, from: wallets.settlementAddress, to: request.recipient, amount: amount.toString(), estimatedFee: fee.toString() });
  const headBlockNumber = blockAt(context, chain);
  yield {
    metadata: processor,
    appends: apply({
      type: 'RecordSignedTransaction',
      id,
      raw: signed.raw,
      txHash: signed.txHash,
      nonce: signed.nonce,
      fee: fee.toString(),
      ...(bitcoin ? { headBlockNumber, inputs, holdFee: true } : { maxFeePerGas: '30000000000', maxPriorityFeePerGas: '1500000000' }),
    }),
  };
  yield { metadata: processor, appends: apply({ type: 'RecordBroadcast', id, txHash: signed.txHash }) };
  if (outcome === 'failed') return yield { metadata: processor, appends: apply({ type: 'FailWithdrawal', id, txnError: 'the transaction reverted on chain' }) };
  const charge: LedgerCommand[] = bitcoin ? [{ type: 'ChargeFee', orgId, tokenId: token.id, amount: fee, reason: 'withdrawal', reference: `withdrawal:${id}` }] : [];
  yield { metadata: processor, appends: apply({ type: 'CompleteWithdrawal', id, txHash: signed.txHash, blockNumber: blockAt(context, chain), fee: fee.toString() }, charge) };
}

/** EVM: the gas wallet sends the settlement wallet the withdrawal's fee, recorded before it is sent, then confirmed. */
function* gasTopUp(context: HistoryContext, withdrawalId: string, chain: ChainDefinition, wallets: { settlementAddress: string; gasAddress: string | null }, fee: bigint, metadata: CommandMetadata): Steps {
  const stream = streams.withdrawalGas(withdrawalId);
  let state: GasTopUpState = gasTopUpDecider.initialState;
  const record = (command: GasTopUpCommand) => {
    const events = gasTopUpDecider.decide(command, state, { now: context.clock.now });
    state = events.reduce(gasTopUpDecider.evolve, state);
    return context.book.append(stream, events);
  };
  const step = signedStep(chain, { nonce: 0, from: wallets.gasAddress!, to: wallets.settlementAddress, amount: fee.toString(), estimatedFee: evmFee(21_000n).toString() });
  yield { metadata, appends: [record({ type: 'RecordTopUpSigned', withdrawalId, chainId: chain.id, step })] };
  yield { metadata, appends: [record({ type: 'RecordTopUpConfirmed', withdrawalId, blockNumber: blockAt(context, chain), fee: evmFee(21_000n) })] };
}
