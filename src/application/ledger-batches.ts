import { DomainError } from '../domain/errors.js';
import { ledgerDecider } from '../domain/ledger/decide.js';
import type { LedgerEvent, LedgerState } from '../domain/ledger/ledger.js';
import { WrongExpectedRevisionError } from '../eventstore/errors.js';
import type { ExpectedRevision, StreamAppend } from '../eventstore/port.js';
import type { DecidedAppend } from './atomic-decision.js';
import { MAX_DECISION_ATTEMPTS, pauseAfterConflict, toNewEvents, type CommandMetadata, type CommandServices } from './command-handler.js';
import { loadLedger } from './ledgers.js';

/** The ledger a decision is made on: its balances, the revision they stand at, and which try this is. */
export interface LedgerView {
  state: LedgerState;
  expectedRevision: ExpectedRevision;
  /** 1 on the first try; above 1 after a conflict, when whatever was read before queueing must be read again */
  attempt: number;
}

/**
 * A decision on one ledger: its appends (at most one to the ledger itself, decided on the view's
 * state at the view's revision) and its answer. A DomainError thrown instead refuses this decision
 * alone; nothing of it is written.
 */
export type LedgerDecision<Result> = (ledger: LedgerView, now: Date) => Promise<{ appends: DecidedAppend[]; result: Result }>;

interface Task {
  services: CommandServices;
  metadata: CommandMetadata;
  decide: LedgerDecision<object>;
  resolve: (value: object & { position: bigint | null }) => void;
  reject: (error: unknown) => void;
  attempt: number;
  /** decided again on its own: its last try conflicted on a stream of its own */
  solo: boolean;
}

interface Accepted {
  task: Task;
  appends: StreamAppend[];
  wrote: boolean;
  result: object;
}

interface LedgerQueue {
  tasks: Task[];
  running: boolean;
}

const advance = (view: LedgerView, events: LedgerEvent[]): LedgerView =>
  events.length === 0
    ? view
    : {
        state: events.reduce(ledgerDecider.evolve, view.state),
        expectedRevision: (view.expectedRevision === 'no_stream' ? -1n : (view.expectedRevision as bigint)) + BigInt(events.length),
        attempt: view.attempt,
      };

/**
 * Group commit per ledger. Every deposit and withdrawal of one organization's token moves the same
 * ledger stream, so its writers must take turns (ARCHITECTURE invariant 2: each decision on the
 * revision it read). Instead of one read-decide-append round per command, the commands that queued
 * while the previous batch was being written are decided one after another on the ledger as the
 * earlier ones in the batch leave it, and all of them are appended in ONE atomic append: one
 * ledger read and one commit for the whole batch.
 *
 * - A refused decision (DomainError) refuses that command alone.
 * - Two commands of one batch that write the same other stream (two requests with one reference)
 *   are not decided together: the later one waits for the next batch.
 * - Another process moved the ledger: the batch is read and decided again. A conflict on another
 *   stream (a withdrawal, a deposit, a reference) sends that command alone to a next try, where it
 *   re-reads what it read before queueing (`attempt > 1`); the others go on as a batch.
 * - At most `maxQueuedPerLedger` commands wait on one ledger; beyond that SERVICE_UNAVAILABLE at once.
 */
export class LedgerBatcher {
  private readonly queues = new Map<string, LedgerQueue>();

  constructor(
    readonly maxQueuedPerLedger = 10_000,
    readonly maxBatch = 256,
  ) {}

  decide<Result extends object>(
    services: CommandServices,
    ledgerStream: string,
    metadata: CommandMetadata,
    decide: LedgerDecision<Result>,
  ): Promise<Result & { position: bigint | null }> {
    const queue = this.queues.get(ledgerStream) ?? { tasks: [], running: false };
    if (queue.tasks.length >= this.maxQueuedPerLedger) {
      return Promise.reject(new DomainError('SERVICE_UNAVAILABLE', 'Too many commands are waiting on one ledger; retry shortly', { stream: ledgerStream }));
    }
    this.queues.set(ledgerStream, queue);
    const settled = new Promise<Result & { position: bigint | null }>((resolve, reject) => {
      queue.tasks.push({ services, metadata, decide, resolve: resolve as Task['resolve'], reject, attempt: 1, solo: false });
    });
    if (!queue.running) void this.drain(ledgerStream, queue);
    return settled;
  }

  /** ledgers with commands running or waiting (for tests and diagnostics) */
  get activeLedgers(): number {
    return this.queues.size;
  }

  private async drain(ledgerStream: string, queue: LedgerQueue): Promise<void> {
    queue.running = true;
    try {
      while (queue.tasks.length > 0) await this.runBatch(ledgerStream, queue, this.takeBatch(queue));
    } finally {
      queue.running = false;
      if (this.queues.get(ledgerStream) === queue) this.queues.delete(ledgerStream);
    }
  }

  private takeBatch(queue: LedgerQueue): Task[] {
    if (queue.tasks[0]!.solo) return queue.tasks.splice(0, 1);
    const end = queue.tasks.findIndex((task, index) => task.solo || index >= this.maxBatch);
    return queue.tasks.splice(0, end === -1 ? queue.tasks.length : end);
  }

  private async runBatch(ledgerStream: string, queue: LedgerQueue, batch: Task[]): Promise<void> {
    const { store, clock } = batch[0]!.services;
    const now = clock();
    let loaded: { state: LedgerState; expectedRevision: ExpectedRevision };
    try {
      loaded = await loadLedger(store, ledgerStream);
    } catch (error) {
      for (const task of batch) task.reject(error);
      return;
    }
    let view: LedgerView = { ...loaded, attempt: 1 };
    const accepted: Accepted[] = [];
    const deferred: Task[] = [];
    const written = new Set<string>();
    const ledgerEvents: StreamAppend['events'] = [];

    for (const task of batch) {
      let decision: Awaited<ReturnType<LedgerDecision<object>>>;
      try {
        decision = await task.decide({ ...view, attempt: task.attempt }, now);
      } catch (error) {
        task.reject(error);
        continue;
      }
      const others = decision.appends.filter((append) => append.stream !== ledgerStream && append.events.length > 0);
      const onLedger = decision.appends.filter((append) => append.stream === ledgerStream && append.events.length > 0);
      if (others.some((append) => written.has(append.stream))) {
        deferred.push(task);
        continue;
      }
      if (onLedger.length > 1 || (onLedger[0] && onLedger[0].expectedRevision !== view.expectedRevision)) {
        task.reject(new Error(`a ledger decision must append once, at the revision it was given (${ledgerStream})`));
        continue;
      }
      for (const append of others) written.add(append.stream);
      const ledgerDomainEvents = (onLedger[0]?.events ?? []) as LedgerEvent[];
      ledgerEvents.push(...toNewEvents(ledgerDomainEvents, task.metadata, now));
      view = advance(view, ledgerDomainEvents);
      const appends = others.map(({ stream, expectedRevision, events }) => ({ stream, expectedRevision, events: toNewEvents(events, task.metadata, now) }));
      accepted.push({ task, appends, wrote: appends.length > 0 || ledgerDomainEvents.length > 0, result: decision.result });
    }
    queue.tasks.unshift(...deferred);
    if (accepted.length === 0) return;

    const appends = accepted.flatMap(({ appends: own }) => own);
    if (ledgerEvents.length > 0) appends.push({ stream: ledgerStream, expectedRevision: loaded.expectedRevision, events: ledgerEvents });
    if (appends.length === 0) {
      for (const { task, result } of accepted) task.resolve({ ...result, position: null });
      return;
    }
    try {
      const { position } = await store.appendMany(appends);
      for (const { task, result, wrote } of accepted) task.resolve({ ...result, position: wrote ? position : null });
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) {
        for (const { task } of accepted) task.reject(error);
        return;
      }
      await this.retryAfterConflict(ledgerStream, queue, accepted, error);
    }
  }

  private async retryAfterConflict(ledgerStream: string, queue: LedgerQueue, accepted: Accepted[], conflict: WrongExpectedRevisionError) {
    const onLedger = conflict.stream === ledgerStream;
    const owners = new Set(accepted.filter(({ appends }) => appends.some((append) => append.stream === conflict.stream)).map(({ task }) => task));
    const retry: Task[] = [];
    for (const { task } of accepted) {
      const culprit = onLedger || owners.has(task) || owners.size === 0;
      if (culprit) {
        task.attempt++;
        task.solo = task.solo || !onLedger;
      }
      if (task.attempt > MAX_DECISION_ATTEMPTS) task.reject(conflict);
      else retry.push(task);
    }
    queue.tasks.unshift(...retry);
    if (onLedger) await pauseAfterConflict(Math.max(...retry.map((task) => task.attempt), 1));
  }
}

/** The process's batcher: every command module shares it, so all writers of one ledger take turns. */
export const sharedLedgerBatcher = new LedgerBatcher();

/** A decision on a ledger, in its turn and batched with the others queued on it. */
export const onLedger = <Result extends object>(
  services: CommandServices & { ledgerBatcher?: LedgerBatcher | undefined },
  ledgerStream: string,
  metadata: CommandMetadata,
  decide: LedgerDecision<Result>,
) => (services.ledgerBatcher ?? sharedLedgerBatcher).decide(services, ledgerStream, metadata, decide);

/** What a decision read before queueing, on its first try; read again on a later one. */
export const readOnRetry = <T>(ledger: LedgerView, readBefore: T, readAgain: () => Promise<T>): Promise<T> =>
  ledger.attempt === 1 ? Promise.resolve(readBefore) : readAgain();
