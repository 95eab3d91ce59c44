import { findChain } from '../catalog/registry.js';
import { tokenOfAsset } from '../catalog/tokens.js';
import { depositDecider, type DepositCommand } from '../domain/deposit/decide.js';
import type { Deposit, DepositCredit, DepositEvent, DepositRef } from '../domain/deposit/deposit.js';
import { DomainError } from '../errors.js';
import { ledgerDecider } from '../domain/ledger/decide.js';
import { streams } from '../domain/streams.js';
import { decideAndAppend, handleCommand, loadAggregate, type CommandMetadata, type CommandServices, type DecidedAppend } from './command-handler.js';
import { onLedger, type LedgerBatcher } from './ledger-batches.js';

/** One transfer a chain watcher saw arrive at one of our addresses. */
export interface ObservedTransfer {
  chainId: string;
  txHash: string;
  /** output index (Bitcoin), the log's index within its transaction (token transfers), 0 for a plain native transfer */
  index: number;
  /** set for EVM token transfers keyed by the log's index within the transaction (see DepositDetails) */
  logIndexInTransaction?: true;
  blockNumber: number;
  blockHash: string;
  from: string;
  to: string;
  /** 'native' or the token's contract address */
  asset: string;
  /** base units */
  amount: bigint;
  destinationTag: number | null;
}

/** The deposit account the transfer's address (and tag) belongs to. */
export interface DepositOwner {
  orgId: string;
  externalUserId: string;
  accountChainId: string;
}

export interface DepositServices extends CommandServices {
  /** defaults to the process's shared batcher, so every writer of one ledger takes turns */
  ledgerBatcher?: LedgerBatcher;
}

export type DepositReference = DepositRef;

/**
 * Transaction hashes are hex; a watcher may report one in either case, and a different case must
 * not make a different deposit. XRP writes its hashes in upper case, every other chain in lower.
 */
export const canonicalTxHash = (chainId: string, txHash: string): string =>
  findChain(chainId)?.family === 'xrp' ? txHash.toUpperCase() : txHash.toLowerCase();

const canonicalRef = (ref: DepositRef): DepositRef => ({ chainId: ref.chainId, txHash: canonicalTxHash(ref.chainId, ref.txHash), index: ref.index });

const classify = (owner: DepositOwner | null, amount: bigint, minimumAmount: string): DepositCredit => {
  if (owner === null) return 'unattributed';
  return amount < BigInt(minimumAmount) ? 'below_minimum' : 'credit';
};

/** The ledger a deposit moves, or null when it never reaches one. */
const ledgerOf = (deposit: Deposit): string | null =>
  deposit.status !== 'None' && deposit.credit === 'credit' && deposit.orgId !== null ? streams.ledger(deposit.orgId, deposit.tokenId) : null;

/** A deposit stream as it stands: its state and the revision it stands at (what a decision is made on). */
type LoadedDeposit = Awaited<ReturnType<typeof loadAggregate<DepositEvent, Deposit>>>;

const NO_DEPOSIT_YET: LoadedDeposit = { state: depositDecider.initialState, expectedRevision: 'no_stream' };

/**
 * What a caller already knows of a deposit stream, so that the first decision needs no read of it:
 * `unseen`, a transfer it has never seen recorded; or the deposit's last DepositDetected event and
 * its revision, as the caller followed it from the event store. A guess, never trusted: the append
 * states that revision, so a stream that moved meanwhile (or exists after all) is a conflict, and
 * the decision is read and made again; and a refusal decided on it (a deposit another watcher
 * credited meanwhile finds no pending amount on the ledger) is made again on a read of the stream.
 */
export type KnownDeposit = 'unseen' | { detected: Extract<DepositEvent, { type: 'DepositDetected' }>['data']; revision: bigint };

const knownState = (known: KnownDeposit): LoadedDeposit =>
  known === 'unseen'
    ? NO_DEPOSIT_YET
    : { state: depositDecider.evolve(depositDecider.initialState, { type: 'DepositDetected', data: known.detected }), expectedRevision: known.revision };

/** The deposit to decide on: what the caller knows on the first try, the stream read on every later one. */
const depositReader = (services: DepositServices, depositStream: string, known: KnownDeposit | undefined) => (attempt: number) =>
  known !== undefined && attempt === 1 ? Promise.resolve(knownState(known)) : loadAggregate(services.store, depositStream, depositDecider);

/**
 * A watcher saw a transfer. An asset outside the catalog is 'ignored' (nothing written). A
 * creditable deposit is recorded with its ledger's pending amount in one atomic append (the deposit
 * stream created with no_stream, the ledger at its revision); an unattributed or below-minimum one
 * is recorded alone. A second report of the same transfer is 'duplicate' and writes nothing.
 * `known: 'unseen'` skips the read of the deposit stream on the first try (see KnownDeposit).
 * `confirmations`, given when the transfer already has as many as its chain requires (a watcher
 * that scans a block after its depth was reached): the deposit is confirmed, and its amount moved
 * from pending to available, in the same append, as confirmDeposit would do right after.
 */
export const recordDeposit = async (
  services: DepositServices,
  transfer: ObservedTransfer,
  owner: DepositOwner | null,
  metadata: CommandMetadata,
  known?: Extract<KnownDeposit, 'unseen'>,
  confirmations?: number,
): Promise<{ outcome: 'recorded' | 'duplicate' | 'ignored' }> => {
  const token = tokenOfAsset(transfer.chainId, transfer.asset);
  if (!token || transfer.amount <= 0n) return { outcome: 'ignored' };
  const ref = canonicalRef(transfer);
  const credit = classify(owner, transfer.amount, token.minimumAmount);
  const command: DepositCommand = {
    type: 'DetectDeposit',
    ...ref,
    tokenId: token.id,
    amount: transfer.amount.toString(),
    orgId: owner?.orgId ?? null,
    externalUserId: owner?.externalUserId ?? null,
    accountChainId: owner?.accountChainId ?? null,
    toAddress: transfer.to,
    destinationTag: transfer.destinationTag,
    senderAddress: transfer.from,
    blockNumber: transfer.blockNumber,
    blockHash: transfer.blockHash,
    credit,
    ...(transfer.logIndexInTransaction ? { logIndexInTransaction: true as const } : {}),
  };
  const depositStream = streams.deposit(ref.chainId, ref.txHash, ref.index);
  const ledgerStream = credit === 'credit' && owner ? streams.ledger(owner.orgId, token.id) : null;
  const scoped = { ...metadata, ...(owner ? { orgId: owner.orgId } : {}) };
  const readDeposit = () => loadAggregate(services.store, depositStream, depositDecider);
  const detect = (deposit: LoadedDeposit, now: Date): DecidedAppend => {
    const detected = depositDecider.decide(command, deposit.state, { now });
    const confirmed =
      confirmations === undefined ? [] : depositDecider.decide({ type: 'ConfirmDeposit', confirmations }, detected.reduce(depositDecider.evolve, deposit.state), { now });
    return { stream: depositStream, expectedRevision: deposit.expectedRevision, events: [...detected, ...confirmed] };
  };
  try {
    if (ledgerStream && owner) {
      await onLedger(services, ledgerStream, scoped, {
        stream: depositStream,
        read: depositReader(services, depositStream, known),
        decide: (ledger, now, deposit) => {
          const appends = [detect(deposit, now)];
          const moved = { orgId: owner.orgId, tokenId: token.id, amount: transfer.amount, deposit: ref };
          const pending = ledgerDecider.decide({ type: 'AddPendingDeposit', ...moved }, ledger.state, { now });
          const credited = confirmations === undefined ? [] : ledgerDecider.decide({ type: 'CreditDeposit', ...moved }, pending.reduce(ledgerDecider.evolve, ledger.state), { now });
          appends.push({ stream: ledgerStream, expectedRevision: ledger.expectedRevision, events: [...pending, ...credited] });
          return { appends, result: {} };
        },
      });
    } else {
      await decideAndAppend(services, scoped, async (now) => ({ appends: [detect(await readDeposit(), now)], result: {} }));
    }
    return { outcome: 'recorded' };
  } catch (error) {
    if (error instanceof DomainError && error.code === 'DUPLICATE_DEPOSIT') return { outcome: 'duplicate' };
    throw error;
  }
};

/** Events of an organization's deposit carry its orgId, for tenant-scoped reads and exports. */
const orgScoped = (metadata: CommandMetadata, deposit: Deposit): CommandMetadata =>
  deposit.status !== 'None' && deposit.orgId !== null ? { ...metadata, orgId: deposit.orgId } : metadata;

type Settle = (
  services: DepositServices,
  reference: DepositRef,
  command: Extract<DepositCommand, { type: 'ConfirmDeposit' | 'RevertDeposit' }>,
  metadata: CommandMetadata,
  known?: Exclude<KnownDeposit, 'unseen'>,
) => Promise<void>;

/**
 * Moves a deposit on (confirm or revert) together with its ledger, atomically. The deposit is read
 * once up front only to learn which ledger to queue on (the organization and token never change),
 * unless the caller knows its last detection; the decision reads it again in its turn, after the
 * ledger (on the first try, a caller's knowledge stands in for that read: see KnownDeposit).
 */
const settleDeposit: Settle = async (services, reference, command, metadata, known) => {
  if (known === undefined) return settleWith(services, reference, command, metadata);
  try {
    await settleWith(services, reference, command, metadata, known);
  } catch (error) {
    // refused on what the caller knew, which may be stale: only a read stream may refuse
    if (!(error instanceof DomainError)) throw error;
    await settleWith(services, reference, command, metadata);
  }
};

/** settleDeposit's one try: on the caller's knowledge when given, else on reads */
const settleWith: Settle = async (services, reference, command, metadata, known) => {
  const ref = canonicalRef(reference);
  const depositStream = streams.deposit(ref.chainId, ref.txHash, ref.index);
  const peek = known ? knownState(known) : await loadAggregate(services.store, depositStream, depositDecider);
  const ledgerStream = ledgerOf(peek.state);
  const scoped = orgScoped(metadata, peek.state);
  if (ledgerStream === null) {
    await handleCommand(services, depositStream, depositDecider, command, scoped);
    return;
  }
  await onLedger(services, ledgerStream, scoped, {
    stream: depositStream,
    read: depositReader(services, depositStream, known),
    decide: (ledger, now, deposit) => {
      // the organization and token of a deposit never change: a stream naming another ledger is not this deposit
      if (deposit.state.status !== 'None' && ledgerOf(deposit.state) !== ledgerStream) throw new Error(`deposit ${depositStream} does not move ${ledgerStream}`);
      const events = depositDecider.decide(command, deposit.state, { now });
      const appends: DecidedAppend[] = [{ stream: depositStream, expectedRevision: deposit.expectedRevision, events }];
      if (events.length > 0 && deposit.state.status !== 'None' && deposit.state.orgId !== null) {
        const { orgId, tokenId, amount } = deposit.state;
        const type = command.type === 'ConfirmDeposit' ? 'CreditDeposit' : 'RevertPendingDeposit';
        const moved = ledgerDecider.decide({ type, orgId, tokenId, amount: BigInt(amount), deposit: ref }, ledger.state, { now });
        appends.push({ stream: ledgerStream, expectedRevision: ledger.expectedRevision, events: moved });
      }
      return { appends, result: {} };
    },
  });
};

/**
 * The transfer has enough confirmations: the deposit is confirmed and, when creditable, its amount
 * moves from pending to available. Confirming twice is a no-op; confirming a reverted deposit is
 * refused (DEPOSIT_REVERTED), an unknown one is NOT_FOUND.
 */
export const confirmDeposit = async (
  services: DepositServices,
  ref: DepositRef,
  confirmations: number,
  metadata: CommandMetadata,
  known?: Exclude<KnownDeposit, 'unseen'>,
): Promise<void> => settleDeposit(services, ref, { type: 'ConfirmDeposit', confirmations }, metadata, known);

/**
 * A reorg dropped the transfer's block before confirmation: the deposit is reverted and its pending
 * amount leaves the ledger. Reverting twice is a no-op; a confirmed deposit is not reverted
 * (DEPOSIT_ALREADY_CONFIRMED).
 */
export const revertDeposit = async (services: DepositServices, ref: DepositRef, reason: string, metadata: CommandMetadata): Promise<void> =>
  settleDeposit(services, ref, { type: 'RevertDeposit', reason }, metadata);

