import { findChain } from '../catalog/registry.js';
import { tokenOfAsset } from '../catalog/tokens.js';
import { depositDecider, type DepositCommand } from '../domain/deposit/decide.js';
import type { Deposit, DepositCredit, DepositEvent, DepositRef } from '../domain/deposit/deposit.js';
import { DomainError } from '../errors.js';
import { ledgerDecider } from '../domain/ledger/decide.js';
import type { LedgerEvent, LedgerState } from '../domain/ledger/ledger.js';
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

/** One transfer to record, with what the caller knows of it (see recordDeposit's `known` and `confirmations`). */
export interface TransferToRecord {
  transfer: ObservedTransfer;
  owner: DepositOwner | null;
  known?: Extract<KnownDeposit, 'unseen'>;
  confirmations?: number;
}

export type RecordOutcome = 'recorded' | 'duplicate' | 'ignored';

/** A transfer made into its deposit's detection: the command, the deposit's stream and the ledger it moves (null: none). */
interface Detection {
  seen: TransferToRecord;
  command: Extract<DepositCommand, { type: 'DetectDeposit' }>;
  depositStream: string;
  ledgerStream: string | null;
}

/** the detection of a transfer; null when the catalog does not know its asset or it moves nothing ('ignored') */
const detectionOf = (seen: TransferToRecord): Detection | null => {
  const { transfer, owner } = seen;
  const token = tokenOfAsset(transfer.chainId, transfer.asset);
  if (!token || transfer.amount <= 0n) return null;
  const ref = canonicalRef(transfer);
  const credit = classify(owner, transfer.amount, token.minimumAmount);
  const command: Detection['command'] = {
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
  const ledgerStream = credit === 'credit' && owner ? streams.ledger(owner.orgId, token.id) : null;
  return { seen, command, depositStream: streams.deposit(ref.chainId, ref.txHash, ref.index), ledgerStream };
};

/** the deposit stream's append: detected, and confirmed with it when the transfer is deep enough */
const detectedAppend = ({ command, depositStream, seen }: Detection, deposit: LoadedDeposit, now: Date): DecidedAppend => {
  const detected = depositDecider.decide(command, deposit.state, { now });
  const confirmed =
    seen.confirmations === undefined ? [] : depositDecider.decide({ type: 'ConfirmDeposit', confirmations: seen.confirmations }, detected.reduce(depositDecider.evolve, deposit.state), { now });
  return { stream: depositStream, expectedRevision: deposit.expectedRevision, events: [...detected, ...confirmed] };
};

/** the ledger's events for a detection: its amount pending, and credited with it when the transfer is deep enough */
const ledgerEventsOf = ({ command, seen }: Detection, ledger: LedgerState, now: Date): LedgerEvent[] => {
  const moved = { orgId: command.orgId!, tokenId: command.tokenId, amount: seen.transfer.amount, deposit: { chainId: command.chainId, txHash: command.txHash, index: command.index } };
  const pending = ledgerDecider.decide({ type: 'AddPendingDeposit', ...moved }, ledger, { now });
  if (seen.confirmations === undefined) return pending;
  return [...pending, ...ledgerDecider.decide({ type: 'CreditDeposit', ...moved }, pending.reduce(ledgerDecider.evolve, ledger), { now })];
};

const isDuplicate = (error: unknown) => error instanceof DomainError && error.code === 'DUPLICATE_DEPOSIT';

/** deposits of one ledger recorded in one decision at most: a block's transfers to one ledger, up to this many, are one append */
const DEPOSITS_PER_DECISION = 256;

/** what one decision on a ledger carries: its items in the order given, and each one's position in the caller's list */
interface LedgerChunk<T> {
  ledgerStream: string;
  items: T[];
  positions: number[];
}

/** items grouped by the ledger they move, in the order given, each group cut into decisions of DEPOSITS_PER_DECISION at most */
const ledgerChunks = <T>(entries: { ledgerStream: string; item: T; position: number }[]): LedgerChunk<T>[] => {
  const byLedger = new Map<string, { items: T[]; positions: number[] }>();
  for (const { ledgerStream, item, position } of entries) {
    const group = byLedger.get(ledgerStream) ?? { items: [], positions: [] };
    byLedger.set(ledgerStream, group);
    group.items.push(item);
    group.positions.push(position);
  }
  return [...byLedger].flatMap(([ledgerStream, { items, positions }]) =>
    Array.from({ length: Math.ceil(items.length / DEPOSITS_PER_DECISION) }, (_, chunk) => {
      const from = chunk * DEPOSITS_PER_DECISION;
      return { ledgerStream, items: items.slice(from, from + DEPOSITS_PER_DECISION), positions: positions.slice(from, from + DEPOSITS_PER_DECISION) };
    }),
  );
};

/**
 * Detections of one ledger, recorded in ONE decision on it: every deposit stream created (no_stream,
 * or after a revert) and the ledger's events for each, in the order given, in one atomic append.
 * A transfer already recorded is 'duplicate' and drops out; the others are recorded. A guess
 * (`unseen`) that was wrong makes the append conflict on that deposit's stream: the decision is then
 * made again on a read of every one of its deposit streams, and the recorded one drops out as a
 * duplicate.
 */
const recordOnLedger = async (services: DepositServices, ledgerStream: string, detections: Detection[], metadata: CommandMetadata): Promise<RecordOutcome[]> => {
  const { outcomes } = await onLedger(services, ledgerStream, metadata, {
    // one deposit names its stream, so a second decision on it waits for this one (many are checked at append)
    ...(detections.length === 1 ? { stream: detections[0]!.depositStream } : {}),
    read: (attempt) => Promise.all(detections.map(({ depositStream, seen }) => depositReader(services, depositStream, seen.known)(attempt))),
    decide: (ledger, now, deposits) => {
      const appends: DecidedAppend[] = [];
      const ledgerEvents: LedgerEvent[] = [];
      let state = ledger.state;
      const outcomes = detections.map((detection, index): RecordOutcome => {
        let append: DecidedAppend;
        try {
          append = detectedAppend(detection, deposits[index]!, now);
        } catch (error) {
          if (isDuplicate(error)) return 'duplicate';
          throw error;
        }
        const events = ledgerEventsOf(detection, state, now);
        state = events.reduce(ledgerDecider.evolve, state);
        appends.push(append);
        ledgerEvents.push(...events);
        return 'recorded';
      });
      appends.push({ stream: ledgerStream, expectedRevision: ledger.expectedRevision, events: ledgerEvents });
      return { appends, result: { outcomes } };
    },
  });
  return outcomes;
};

/** an unattributed or below-minimum deposit: recorded alone, on no ledger */
const recordAlone = async (services: DepositServices, detection: Detection, metadata: CommandMetadata): Promise<RecordOutcome> => {
  try {
    await decideAndAppend(services, metadata, async (now) => ({ appends: [detectedAppend(detection, await loadAggregate(services.store, detection.depositStream, depositDecider), now)], result: {} }));
    return 'recorded';
  } catch (error) {
    if (isDuplicate(error)) return 'duplicate';
    throw error;
  }
};

/** every promise settled, then the first failure thrown (nothing runs on after the caller moved on) */
const allSettled = async <T>(promises: Promise<T>[]): Promise<T[]> => {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((outcome) => (outcome as PromiseFulfilledResult<T>).value);
};

/**
 * A watcher saw transfers (a block's): each one's outcome, in order. An asset outside the catalog is
 * 'ignored' (nothing written). Creditable deposits are recorded with their ledger's pending amounts,
 * those of one ledger in one decision and one atomic append (recordOnLedger); an unattributed or
 * below-minimum one is recorded alone. A transfer recorded before, or given twice, is 'duplicate'
 * (writes nothing) and does not hold back the others. `known: 'unseen'` skips the read of the deposit stream on the
 * first try (see KnownDeposit). `confirmations`, given when the transfer already has as many as its
 * chain requires (a watcher that scans a block after its depth was reached): the deposit is
 * confirmed, and its amount moved from pending to available, in the same append, as confirmDeposit
 * would do right after. The first failure is thrown once every decision has settled.
 */
export const recordDeposits = async (services: DepositServices, transfers: TransferToRecord[], metadata: CommandMetadata): Promise<RecordOutcome[]> => {
  const outcomes: RecordOutcome[] = transfers.map(() => 'ignored');
  const onLedgers: { ledgerStream: string; item: Detection; position: number }[] = [];
  const work: Promise<void>[] = [];
  // the same transfer twice in one report (a node that answers it twice): recorded once, the repeat a duplicate
  const reported = new Set<string>();
  transfers.forEach((seen, position) => {
    const detection = detectionOf(seen);
    if (detection === null) return;
    if (reported.has(detection.depositStream)) {
      outcomes[position] = 'duplicate';
      return;
    }
    reported.add(detection.depositStream);
    const scoped = seen.owner ? { ...metadata, orgId: seen.owner.orgId } : metadata;
    if (detection.ledgerStream === null) {
      work.push(recordAlone(services, detection, scoped).then((outcome) => void (outcomes[position] = outcome)));
      return;
    }
    onLedgers.push({ ledgerStream: detection.ledgerStream, item: detection, position });
  });
  for (const { ledgerStream, items, positions } of ledgerChunks(onLedgers)) {
    const recorded = recordOnLedger(services, ledgerStream, items, { ...metadata, orgId: items[0]!.command.orgId! });
    work.push(recorded.then((each) => each.forEach((outcome, index) => (outcomes[positions[index]!] = outcome))));
  }
  await allSettled(work);
  return outcomes;
};

/** One transfer: recordDeposits of it alone. */
export const recordDeposit = async (
  services: DepositServices,
  transfer: ObservedTransfer,
  owner: DepositOwner | null,
  metadata: CommandMetadata,
  known?: Extract<KnownDeposit, 'unseen'>,
  confirmations?: number,
): Promise<{ outcome: RecordOutcome }> => {
  const [outcome] = await recordDeposits(services, [{ transfer, owner, ...(known ? { known } : {}), ...(confirmations === undefined ? {} : { confirmations }) }], metadata);
  return { outcome: outcome! };
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

/** a deposit moved on (confirmed or reverted) on its ledger: the deposit stream's append and the ledger's events (none when the step decides nothing) */
const settleStep = (
  command: Extract<DepositCommand, { type: 'ConfirmDeposit' | 'RevertDeposit' }>,
  ref: DepositRef,
  ledgerStream: string,
  deposit: LoadedDeposit,
  ledger: LedgerState,
  now: Date,
): { append: DecidedAppend; ledgerEvents: LedgerEvent[] } => {
  const depositStream = streams.deposit(ref.chainId, ref.txHash, ref.index);
  // the organization and token of a deposit never change: a stream naming another ledger is not this deposit
  if (deposit.state.status !== 'None' && ledgerOf(deposit.state) !== ledgerStream) throw new Error(`deposit ${depositStream} does not move ${ledgerStream}`);
  const events = depositDecider.decide(command, deposit.state, { now });
  const append = { stream: depositStream, expectedRevision: deposit.expectedRevision, events };
  if (events.length === 0 || deposit.state.status === 'None' || deposit.state.orgId === null) return { append, ledgerEvents: [] };
  const { orgId, tokenId, amount } = deposit.state;
  const type = command.type === 'ConfirmDeposit' ? 'CreditDeposit' : 'RevertPendingDeposit';
  return { append, ledgerEvents: ledgerDecider.decide({ type, orgId, tokenId, amount: BigInt(amount), deposit: ref }, ledger, { now }) };
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
      const { append, ledgerEvents } = settleStep(command, ref, ledgerStream, deposit, ledger.state, now);
      const appends: DecidedAppend[] = [append];
      if (ledgerEvents.length > 0) appends.push({ stream: ledgerStream, expectedRevision: ledger.expectedRevision, events: ledgerEvents });
      return { appends, result: {} };
    },
  });
};

/** A deposit due for confirmation, with its detection as the watcher followed it. */
export interface DepositToConfirm {
  ref: DepositRef;
  confirmations: number;
  /** its detection as followed (without it, the deposit is read and confirmed alone) */
  known?: Exclude<KnownDeposit, 'unseen'>;
}

/**
 * Confirmations of one ledger's deposits in ONE decision on it (decided on what the caller knows,
 * then on reads after a conflict): every deposit confirmed and credited in one atomic append. A
 * deposit this decision would refuse drops out of it and is returned, to be confirmed alone.
 */
const confirmOnLedger = async (services: DepositServices, ledgerStream: string, due: DepositToConfirm[], metadata: CommandMetadata): Promise<DepositToConfirm[]> => {
  const refs = due.map(({ ref }) => canonicalRef(ref));
  const depositStreams = refs.map((ref) => streams.deposit(ref.chainId, ref.txHash, ref.index));
  const { refused } = await onLedger(services, ledgerStream, metadata, {
    ...(due.length === 1 ? { stream: depositStreams[0]! } : {}),
    read: (attempt) => Promise.all(due.map(({ known }, index) => depositReader(services, depositStreams[index]!, known)(attempt))),
    decide: (ledger, now, deposits) => {
      const appends: DecidedAppend[] = [];
      const ledgerEvents: LedgerEvent[] = [];
      const refused: DepositToConfirm[] = [];
      let state = ledger.state;
      due.forEach((deposit, index) => {
        let step: ReturnType<typeof settleStep>;
        try {
          step = settleStep({ type: 'ConfirmDeposit', confirmations: deposit.confirmations }, refs[index]!, ledgerStream, deposits[index]!, state, now);
        } catch (error) {
          if (!(error instanceof DomainError)) throw error;
          refused.push(deposit);
          return;
        }
        state = step.ledgerEvents.reduce(ledgerDecider.evolve, state);
        appends.push(step.append);
        ledgerEvents.push(...step.ledgerEvents);
      });
      appends.push({ stream: ledgerStream, expectedRevision: ledger.expectedRevision, events: ledgerEvents });
      return { appends, result: { refused } };
    },
  });
  return refused;
};

/**
 * Deposits deep enough, confirmed (see confirmDeposit): those of one ledger that the caller knows
 * in one decision and one append (confirmOnLedger), the others, and any that decision refuses,
 * one by one through confirmDeposit, whose refusal is the deposit's answer. Each deposit's refusal
 * (a DomainError) or null, in order; any other failure is thrown once every one has settled.
 */
export const confirmDeposits = async (services: DepositServices, due: DepositToConfirm[], metadata: CommandMetadata): Promise<(DomainError | null)[]> => {
  const answers: (DomainError | null)[] = due.map(() => null);
  const alone = (deposit: DepositToConfirm, position: number) =>
    confirmDeposit(services, deposit.ref, deposit.confirmations, metadata, deposit.known).catch((error: unknown) => {
      if (!(error instanceof DomainError)) throw error;
      answers[position] = error;
    });
  const onLedgers: { ledgerStream: string; item: DepositToConfirm; position: number }[] = [];
  const work: Promise<void>[] = [];
  due.forEach((deposit, position) => {
    const ledgerStream = deposit.known ? ledgerOf(knownState(deposit.known).state) : null;
    if (ledgerStream === null) return void work.push(alone(deposit, position));
    onLedgers.push({ ledgerStream, item: deposit, position });
  });
  for (const { ledgerStream, items, positions } of ledgerChunks(onLedgers)) {
    const confirmed = confirmOnLedger(services, ledgerStream, items, orgScoped(metadata, knownState(items[0]!.known!).state));
    work.push(confirmed.then((refused) => allSettled(refused.map((deposit) => alone(deposit, positions[items.indexOf(deposit)]!))).then(() => undefined)));
  }
  await allSettled(work);
  return answers;
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

