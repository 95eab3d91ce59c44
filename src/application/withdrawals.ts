import { timeOrderedId } from '../lib/time-ordered-id.js';
import type { ChainAvailability } from '../chains/chain-availability.js';
import { checkChainAndToken } from './chain-enablement.js';
import type { GatewayLookup } from '../chains/gateway-lookup.js';
import { parseAmount } from '../domain/amount.js';
import { fold } from '../domain/decider.js';
import { DomainError } from '../errors.js';
import { ledgerDecider, type LedgerCommand } from '../domain/ledger/decide.js';
import type { ActiveOrganization } from '../domain/organization/organization.js';
import { streams } from '../domain/streams.js';
import { withdrawalDecider, type WithdrawalCommand } from '../domain/withdrawal/decide.js';
import { withdrawalReferenceClaimed, type WithdrawalReferenceClaimed } from '../domain/withdrawal/reference-claim.js';
import type { WithdrawalEvent, WithdrawalRecord } from '../domain/withdrawal/withdrawal.js';
import { ledgerCommandsFor } from '../domain/withdrawal/ledger-effects.js';
import { loadAggregate, toDomainEvent, type CommandMetadata, type DecidedAppend } from './command-handler.js';
import { WrongExpectedRevisionError } from '../eventstore/errors.js';
import type { ExpectedRevision } from '../eventstore/port.js';
import { loadOrganizationState, rememberedOrganizationState } from './organization-states.js';
import { checkExternalUserId } from './deposit-accounts.js';
import { acceptTotpCode } from './login.js';
import { hasGasWallet, type OrganizationWallets } from './organization-wallets.js';
import { loadGasBuffer } from './gas-buffers.js';
import type { OrganizationServices } from './organizations.js';
import { onLedger, type LedgerBatcher } from './ledger-batches.js';
import { currentRevision } from './stream-revisions.js';
import { checkBounds, checkConfirmedBalance, checkDestinationTag, checkGas, checkRecipient, checkXrpReserve, xrpOrganizationAddress } from './withdrawal-checks.js';

export interface WithdrawalServices extends OrganizationServices {
  /** which chains run service-wide (each organization may switch them off) */
  availability: ChainAvailability;
  gateways: GatewayLookup;
  /** the organizations' settlement and gas wallets; null without a signer (no chain can pay out) */
  wallets: OrganizationWallets | null;
  /** defaults to the process's shared batcher, so every writer of one ledger takes turns */
  ledgerBatcher?: LedgerBatcher;
}

/** Who asks: the organization and the user (an API key acts as its owner). */
export interface Caller {
  orgId: string;
  userId: string;
}

/** POST /withdrawals, after the body's shape was checked (zod). */
export interface WithdrawalRequest {
  chainId: string;
  tokenId: string;
  amount: string;
  recipient: string;
  reference: string;
  memo?: string | undefined;
  internalNote?: string | undefined;
  externalUserId?: string | undefined;
}

const unavailable = (what: string) => new DomainError('SERVICE_UNAVAILABLE', `${what} is not available on this service right now`);

interface LoadedOrganization {
  organization: ActiveOrganization;
  /** the revision it stands at; `fromMemory`: it may lag another process's change by a notification */
  revision: ExpectedRevision;
  fromMemory: boolean;
}

const loadOrganization = async (services: WithdrawalServices, orgId: string, fresh = false): Promise<LoadedOrganization> => {
  const { state, expectedRevision, fromMemory } = await loadOrganizationState(services, orgId, { fresh });
  if (state.status === 'Active') return { organization: state, revision: expectedRevision, fromMemory };
  if (fromMemory) return loadOrganization(services, orgId, true);
  throw new DomainError('UNAUTHORIZED', 'The organization does not exist');
};

/** the organization as memory holds it when it is active there, at once (no read, no promise); else undefined, and loadOrganization decides */
const activeInMemory = (services: WithdrawalServices, orgId: string): LoadedOrganization | undefined => {
  const remembered = rememberedOrganizationState(services, orgId);
  return remembered?.state.status === 'Active' ? { organization: remembered.state, revision: remembered.expectedRevision, fromMemory: true } : undefined;
};

/**
 * `check` on the organization as memory holds it; a refusal is never decided on memory alone
 * (it may lag another process's change by a notification): the stream is read and checked again.
 */
const onOrganization = async <Result>(services: WithdrawalServices, orgId: string, check: (loaded: LoadedOrganization) => Result | Promise<Result>): Promise<Result> => {
  const loaded = activeInMemory(services, orgId) ?? (await loadOrganization(services, orgId));
  try {
    return await check(loaded);
  } catch (error) {
    if (!loaded.fromMemory || !(error instanceof DomainError)) throw error;
    return check(await loadOrganization(services, orgId, true));
  }
};

const userOf = (organization: ActiveOrganization, userId: string) => {
  const user = organization.users.find((candidate) => candidate.userId === userId);
  if (!user) throw new DomainError('UNAUTHORIZED', 'The user is not a member of this organization');
  return user;
};

const memberOf = (services: WithdrawalServices, caller: Caller) => onOrganization(services, caller.orgId, ({ organization }) => userOf(organization, caller.userId));

/** The organization's stream moved past the revision a decision took from memory: decide again on the stream. */
class OrganizationMovedError extends Error {}

/** Refuses (OrganizationMovedError) when the organization's stream is no longer at `revision` (read with the revisions asked beside it): a try after a conflict. */
const checkOrganizationAt = async (services: WithdrawalServices, orgId: string, revision: ExpectedRevision) => {
  const stream = streams.organization(orgId);
  const current = await currentRevision(services.store, stream);
  if ((current ?? 'no_stream') !== revision) throw new OrganizationMovedError(`${stream} moved from ${String(revision)} to ${String(current)}`);
};

/** The withdrawal as its stream holds it (consistent at once); another organization's is WITHDRAWAL_NOT_FOUND. */
export const loadWithdrawal = async (services: Pick<WithdrawalServices, 'store'>, orgId: string, withdrawalId: string) => {
  const loaded = await loadAggregate(services.store, streams.withdrawal(withdrawalId), withdrawalDecider);
  if (loaded.state.status === 'None' || loaded.state.orgId !== orgId) {
    throw new DomainError('WITHDRAWAL_NOT_FOUND', `No withdrawal ${withdrawalId}`, { withdrawalId });
  }
  return { state: loaded.state, expectedRevision: loaded.expectedRevision };
};

/**
 * DUPLICATE_REFERENCE naming the withdrawal that holds the reference, or nothing when it is free:
 * the claim's revision is read with the revisions asked beside it (the claims of a ledger batch's
 * tries after a conflict in one query), and only a taken reference's claim is read, for the
 * withdrawal it names.
 */
const refuseTakenReference = async (services: WithdrawalServices, referenceStream: string, reference: string) => {
  if ((await currentRevision(services.store, referenceStream)) === null) return;
  const [claim] = await services.store.readStream(referenceStream, { maxCount: 1 });
  if (!claim) return;
  const { withdrawalId } = toDomainEvent<WithdrawalReferenceClaimed>(claim).data;
  throw new DomainError('DUPLICATE_REFERENCE', `The reference ${reference} is already used by withdrawal ${withdrawalId}`, { withdrawalId, reference });
};

/**
 * POST /withdrawals' checks in SPEC's order: chain and token, amount, recipient, XRP tag, bounds,
 * gas, and on XRP what the account holds above its reserve. The chain's own answers (tags, gas,
 * reserve) are asked here, before any decision; the balance is checked on the ledger, in its turn.
 */
const checkRequest = async (services: WithdrawalServices, organization: ActiveOrganization, caller: Caller, input: WithdrawalRequest, metadata: CommandMetadata) => {
  if (input.externalUserId !== undefined) checkExternalUserId(input.externalUserId);
  const settings = { availability: services.availability, disabledChainIds: organization.disabledChainIds, disabledTokenIds: organization.disabledTokenIds };
  const { chain, token } = checkChainAndToken(settings, input.chainId, input.tokenId);
  const amount = parseAmount(input.amount);
  checkRecipient(chain, input.recipient);
  const gateway = services.gateways(chain.id);
  if (!gateway) throw unavailable(`Chain ${chain.id}`);
  const memo = input.memo ?? null;
  await checkDestinationTag(chain, gateway, input.recipient, memo);
  checkBounds(token, amount);
  if (hasGasWallet(chain)) {
    if (!services.wallets) throw unavailable('Signing');
    const buffered = async () => (await loadGasBuffer(services.store, chain.id, caller.orgId)).state.balance;
    await checkGas(chain, token, gateway, await services.wallets.walletsOf(caller.orgId, chain.id, metadata), input.recipient, amount, buffered);
  }
  if (chain.family === 'xrp') await checkXrpReserve(chain, gateway, await xrpOrganizationAddress(services.db, caller.orgId, chain.id), input.recipient, amount);
  userOf(organization, caller.userId);
  return { chain, token, amount, memo };
};

/**
 * POST /withdrawals: the request checked, then in one atomic append: the reference claimed
 * (no_stream), the funds held on the ledger (its revision; INSUFFICIENT_BALANCE), the withdrawal
 * created (no_stream). The ledger is shared by every withdrawal and deposit of the token, so the
 * decision waits its turn in the ledger's queue instead of losing races to its neighbours.
 */
export const createWithdrawal = async (services: WithdrawalServices, caller: Caller, input: WithdrawalRequest, metadata: CommandMetadata): Promise<WithdrawalRecord> => {
  try {
    return await requestWithdrawal(services, caller, input, metadata, false);
  } catch (error) {
    if (!(error instanceof OrganizationMovedError)) throw error;
    return requestWithdrawal(services, caller, input, metadata, true);
  }
};

/**
 * The organization (its chain and token switches, members and approval threshold) is decided on as
 * memory holds it, and the decision's append checks that the organization's stream is still at that
 * revision (a change in another process that memory has not heard of yet refuses the append, and
 * the try after it reads the stream and sends the request back to decide again on it), so no
 * withdrawal is decided on settings older than its request. The reference is not read before a
 * first try either: its claim is appended at no_stream, so a taken reference refuses the append,
 * and the try after it names the withdrawal that holds it (the batch's other decisions are decided
 * again and appended without it). `fresh`: read from the stream at the start, as before memory kept it.
 */
const requestWithdrawal = async (services: WithdrawalServices, caller: Caller, input: WithdrawalRequest, metadata: CommandMetadata, fresh: boolean): Promise<WithdrawalRecord> => {
  const checked = async (loaded: LoadedOrganization) => ({ ...loaded, ...(await checkRequest(services, loaded.organization, caller, input, metadata)) });
  const { organization, revision, fromMemory, chain, token, amount, memo } = fresh
    ? await checked(await loadOrganization(services, caller.orgId, true))
    : await onOrganization(services, caller.orgId, checked);
  const id = timeOrderedId();
  const request: WithdrawalCommand = {
    type: 'RequestWithdrawal',
    id,
    orgId: caller.orgId,
    chainId: chain.id,
    tokenId: token.id,
    amount: amount.toString(),
    recipient: input.recipient,
    memo,
    reference: input.reference,
    internalNote: input.internalNote ?? '',
    externalUserId: input.externalUserId ?? null,
    initiator: caller.userId,
    minWithdrawalSigners: organization.minWithdrawalSigners,
  };
  const referenceStream = streams.withdrawalReference(caller.orgId, input.reference);
  const ledgerStream = streams.ledger(caller.orgId, token.id);
  try {
    const { events } = await onLedger(services, ledgerStream, { ...metadata, orgId: caller.orgId }, {
      stream: referenceStream,
      // a first try reads nothing: its append claims the reference at no_stream and checks the
      // organization's stream at `revision`; a try after either moved reads both, to name the
      // withdrawal that holds the reference or to decide again on the stream
      read: (attempt) =>
        attempt === 1
          ? undefined
          : Promise.all([refuseTakenReference(services, referenceStream, input.reference), fromMemory ? checkOrganizationAt(services, caller.orgId, revision) : undefined]).then(() => undefined),
      decide: (ledger, now) => {
        checkConfirmedBalance(chain, ledger.state, amount);
        const held = ledgerDecider.decide({ type: 'HoldFunds', orgId: caller.orgId, tokenId: token.id, amount, withdrawalId: id }, ledger.state, { now });
        const requested = withdrawalDecider.decide(request, withdrawalDecider.initialState, { now });
        const appends: DecidedAppend[] = [
          { stream: referenceStream, expectedRevision: 'no_stream', events: [withdrawalReferenceClaimed(caller.orgId, input.reference, id, now)] },
          { stream: ledgerStream, expectedRevision: ledger.expectedRevision, events: held },
          { stream: streams.withdrawal(id), expectedRevision: 'no_stream', events: requested },
        ];
        return { appends, result: { events: requested }, checks: fromMemory ? [{ stream: streams.organization(caller.orgId), expectedRevision: revision }] : [] };
      },
    });
    return fold(withdrawalDecider, events) as WithdrawalRecord;
  } catch (error) {
    // every try lost the reference race (a claim never goes away): name the withdrawal that won it
    if (error instanceof WrongExpectedRevisionError && error.stream === referenceStream) await refuseTakenReference(services, referenceStream, input.reference);
    throw error;
  }
};

/**
 * Any command on an existing withdrawal, with its ledger effect in the same atomic append
 * (ARCHITECTURE invariants 3 and 5; src/domain/withdrawal/ledger-effects.ts): cancelling or failing
 * releases the hold, completing posts it, signing on Bitcoin and XRP holds the fee too (refused
 * with INSUFFICIENT_BALANCE, nothing written, when the available balance cannot). Both streams are re-read and re-decided on a conflict; the ledger's queue keeps this process's
 * writers of one ledger in turn. The processor uses it for sign / broadcast / complete / fail.
 */
export const applyWithdrawalCommand = async (
  services: Pick<WithdrawalServices, 'store' | 'clock' | 'ledgerBatcher'>,
  withdrawal: Pick<WithdrawalRecord, 'id' | 'orgId' | 'tokenId'>,
  command: Exclude<WithdrawalCommand, { type: 'RequestWithdrawal' }>,
  metadata: CommandMetadata,
  /**
   * more for the same ledger in the same append, after the hold is ended (a network fee the chain
   * took from the balance); one the available balance cannot pay is left out and returned as `unpaid`
   */
  alsoOnLedger: LedgerCommand[] = [],
): Promise<{ withdrawal: WithdrawalRecord; events: WithdrawalEvent[]; unpaid: LedgerCommand[] }> => {
  const withdrawalStream = streams.withdrawal(withdrawal.id);
  const ledgerStream = streams.ledger(withdrawal.orgId, withdrawal.tokenId);
  return onLedger(services, ledgerStream, { ...metadata, orgId: withdrawal.orgId }, {
    stream: withdrawalStream,
    read: () => loadAggregate(services.store, withdrawalStream, withdrawalDecider),
    decide: (ledger, now, current) => {
      const events = withdrawalDecider.decide(command, current.state, { now });
      const after = events.reduce(withdrawalDecider.evolve, current.state) as WithdrawalRecord;
      const appends: DecidedAppend[] = [{ stream: withdrawalStream, expectedRevision: current.expectedRevision, events }];
      let state = ledger.state;
      const decideOn = (ledgerCommand: LedgerCommand) => {
        const decided = ledgerDecider.decide(ledgerCommand, state, { now });
        state = decided.reduce(ledgerDecider.evolve, state);
        return decided;
      };
      const ledgerEvents = ledgerCommandsFor(current.state, events).flatMap(decideOn);
      const unpaid: LedgerCommand[] = [];
      for (const extra of events.length > 0 ? alsoOnLedger : []) {
        try {
          ledgerEvents.push(...decideOn(extra));
        } catch (error) {
          // the chain took it already and the ledger cannot go negative: the outcome is recorded all the
          // same (a fee held beside the amount covers the fee; a withdrawal signed before fees were held may not)
          if (!(error instanceof DomainError) || error.code !== 'INSUFFICIENT_BALANCE') throw error;
          unpaid.push(extra);
        }
      }
      appends.push({ stream: ledgerStream, expectedRevision: ledger.expectedRevision, events: ledgerEvents });
      return { appends, result: { withdrawal: after, events, unpaid } };
    },
  });
};

/**
 * CONTRACT §4: a person approves with a fresh TOTP code (accepted once, the login's own logic).
 * The approval is decided first without writing, so a refused one (DUPLICATE_APPROVAL,
 * WITHDRAWAL_ALREADY_PROCESSED) does not spend the code; then the code, then the approval itself,
 * re-decided on the stream's current revision.
 */
export const approveWithdrawal = async (services: WithdrawalServices, caller: Caller, withdrawalId: string, totpCode: string, metadata: CommandMetadata) => {
  const { state } = await loadWithdrawal(services, caller.orgId, withdrawalId);
  const command: WithdrawalCommand = { type: 'ApproveWithdrawal', id: withdrawalId, userId: caller.userId };
  withdrawalDecider.decide(command, state, { now: services.clock() });
  const user = await memberOf(services, caller);
  await acceptTotpCode(services, user, totpCode, 'approval', { ...metadata, orgId: caller.orgId });
  return (await applyWithdrawalCommand(services, state, command, metadata)).withdrawal;
};

/** the most withdrawals one request approves (CONTRACT §4) */
export const MAX_APPROVALS_PER_REQUEST = 100;

export type BatchApproval = { id: string; withdrawal: WithdrawalRecord } | { id: string; error: DomainError };

/**
 * CONTRACT §4's batch: one fresh code for the whole request (spent once), then each id decided in
 * the order given as the single approval decides it, each on its own stream's revision: one
 * refused id does not stop the others, an id given twice is approved once (the second answer is
 * DUPLICATE_APPROVAL), and racing batches, approvals and cancellations give each approver one
 * approval per withdrawal and one `withdrawal.approved` when the threshold is reached.
 */
export const approveWithdrawals = async (services: WithdrawalServices, caller: Caller, ids: readonly string[], totpCode: string, metadata: CommandMetadata): Promise<BatchApproval[]> => {
  if (ids.length === 0 || ids.length > MAX_APPROVALS_PER_REQUEST) throw new DomainError('BAD_REQUEST', `between 1 and ${MAX_APPROVALS_PER_REQUEST} ids`);
  const user = await memberOf(services, caller);
  await acceptTotpCode(services, user, totpCode, 'approval', { ...metadata, orgId: caller.orgId });
  const results: BatchApproval[] = [];
  for (const id of ids) {
    try {
      const { state } = await loadWithdrawal(services, caller.orgId, id);
      const { withdrawal } = await applyWithdrawalCommand(services, state, { type: 'ApproveWithdrawal', id, userId: caller.userId }, metadata);
      results.push({ id, withdrawal });
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      results.push({ id, error });
    }
  }
  return results;
};

/** SPEC §3: Pending or PendingApproval → Cancelled (`Cancelled by <username>`), the hold released in the same append. */
export const cancelWithdrawal = async (services: WithdrawalServices, caller: Caller, withdrawalId: string, metadata: CommandMetadata) => {
  const { state } = await loadWithdrawal(services, caller.orgId, withdrawalId);
  const { username } = await memberOf(services, caller);
  return (await applyWithdrawalCommand(services, state, { type: 'CancelWithdrawal', id: withdrawalId, userId: caller.userId, username }, metadata)).withdrawal;
};
