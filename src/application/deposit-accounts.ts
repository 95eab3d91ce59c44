import { randomUUID } from 'node:crypto';
import type { DepositAddressBook } from '../chains/address-book.js';
import { accountDecider, type Account, type AccountEvent, type AccountProperties } from '../domain/account/account.js';
import { counterAfterLast, derivationCounterDecider, type DerivationCounter, type DerivationCounterEvent, type DerivationOwnerEvent } from '../domain/derivation/derivation.js';
import { DomainError } from '../errors.js';
import { streams } from '../domain/streams.js';
import { EventStoreUnavailableError } from '../eventstore/errors.js';
import type { ExpectedRevision } from '../eventstore/port.js';
import { decideAndAppend, loadAggregate, toDomainEvent, type CommandMetadata, type CommandServices, type DecidedAppend } from './command-handler.js';

export interface DepositAccountServices extends CommandServices {
  addresses: DepositAddressBook;
}

/** CONTRACT §6: 1–255 characters of printable ASCII. */
export const checkExternalUserId = (userId: string): void => {
  if (!/^[\x20-\x7e]{1,255}$/.test(userId)) {
    throw new DomainError('INVALID_USER_ID', 'userId must be 1 to 255 printable ASCII characters');
  }
};

const ORGANIZATION_OWNER = '(organization)';

/**
 * The index counter of a key space is one stream: concurrent first requests of many users take
 * turns on it (one wins per round). A larger bound than a single-stream decision's, still bounded.
 */
const MAX_ACCOUNT_ATTEMPTS = 200;
const destinationTagSpace = (chainId: string, orgId: string) => `destinationTag:${chainId}:${orgId}`;

/**
 * A key space's counter from its last event (counterAfterLast): one event read, not every index the
 * space ever handed out. The allocation is appended at that event's revision, so a concurrent one
 * (in this process or another) still makes it conflict and decide again.
 */
const loadCounter = async (services: CommandServices, counterStream: string): Promise<{ state: DerivationCounter; expectedRevision: ExpectedRevision }> => {
  const [last] = await services.store.readStream(counterStream, { direction: 'backwards', maxCount: 1 });
  return { state: counterAfterLast(last && toDomainEvent<DerivationCounterEvent>(last)), expectedRevision: last?.revision ?? 'no_stream' };
};

/** The index an owner holds in a space, or the appends that allocate it (counter + owner claim). */
export const indexFor = async (services: CommandServices, space: string, orgId: string, owner: string, now: Date): Promise<{ index: number; appends: DecidedAppend[] }> => {
  const [assigned] = await services.store.readStream(streams.derivationOwner(space, orgId, owner), { maxCount: 1 });
  if (assigned) return { index: toDomainEvent<DerivationOwnerEvent>(assigned).data.index, appends: [] };
  const counterStream = streams.derivationCounter(space);
  const { state, expectedRevision } = await loadCounter(services, counterStream);
  const [allocated] = derivationCounterDecider.decide({ type: 'AllocateDerivationIndex', space, orgId, owner }, state, { now });
  const index = allocated!.data.index;
  const assignedEvent: DerivationOwnerEvent = { type: 'DerivationIndexAssigned', data: { space, index, orgId, owner, assignedAt: now.toISOString() } };
  return {
    index,
    appends: [
      { stream: counterStream, expectedRevision, events: [allocated!] },
      { stream: streams.derivationOwner(space, orgId, owner), expectedRevision: 'no_stream', events: [assignedEvent] },
    ],
  };
};

const propertiesFor = async (services: DepositAccountServices, orgId: string, chainId: string, externalUserId: string, now: Date) => {
  const { addresses } = services;
  const space = addresses.keySpace(chainId);
  if (!addresses.usesDestinationTags(chainId)) {
    const { index, appends } = await indexFor(services, space, orgId, externalUserId, now);
    return { properties: { address: addresses.addressAt(chainId, index) } as AccountProperties, derivation: { space, index }, appends };
  }
  const organization = await indexFor(services, space, orgId, ORGANIZATION_OWNER, now);
  const tag = await indexFor(services, destinationTagSpace(chainId, orgId), orgId, externalUserId, now);
  return {
    // tags start at 1: some wallets treat 0 as "no tag"
    properties: { address: addresses.addressAt(chainId, organization.index), destinationTag: String(tag.index + 1) },
    derivation: { space, index: organization.index },
    appends: [...organization.appends, ...tag.appends],
  };
};

/**
 * GET /payments/deposit-address: the user's account on the chain, created on first request. The
 * account stream is created with no_stream, the derivation index with the counter's revision, all in
 * one atomic append: under any concurrency a user gets one account, and no index is given twice.
 */
export const getOrCreateDepositAccount = async (
  services: DepositAccountServices,
  input: { orgId: string; chainId: string; externalUserId: string },
  metadata: CommandMetadata,
): Promise<{ account: Extract<Account, { status: 'Created' }>; created: boolean }> => {
  checkExternalUserId(input.externalUserId);
  const accountStream = streams.account(input.orgId, input.chainId, input.externalUserId);
  try {
    const { account, created } = await decideAndAppend(
      services,
      metadata,
      async (now) => {
        const { state, expectedRevision } = await loadAggregate(services.store, accountStream, accountDecider);
        if (state.status === 'Created') return { appends: [], result: { account: state, created: false } };
        const { properties, derivation, appends } = await propertiesFor(services, input.orgId, input.chainId, input.externalUserId, now);
        const events: AccountEvent[] = accountDecider.decide({ type: 'CreateAccount', ...input, orgDepositAccountId: randomUUID(), properties, derivation }, state, { now });
        const account = events.reduce(accountDecider.evolve, state) as Extract<Account, { status: 'Created' }>;
        return { appends: [...appends, { stream: accountStream, expectedRevision, events }], result: { account, created: true } };
      },
      // a concurrent request created the account, or took the index we counted on: read and decide again
      { maxAttempts: MAX_ACCOUNT_ATTEMPTS },
    );
    return { account, created };
  } catch (error) {
    if (error instanceof DomainError) throw error;
    throw new DomainError('FAILED_TO_CREATE_DEPOSIT_ACCOUNT', 'The deposit account could not be created; retry shortly', {
      reason: error instanceof EventStoreUnavailableError ? 'event store unavailable' : 'conflicts or derivation failure',
    });
  }
};
