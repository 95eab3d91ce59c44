import { ledgerBatchSize, ledgerRetries, ledgerStageDuration } from '../observability/metrics.js';
import { DomainError } from '../errors.js';
import { ledgerDecider } from '../domain/ledger/decide.js';
import type { LedgerEvent, LedgerState } from '../domain/ledger/ledger.js';
import { WrongExpectedRevisionError } from '../eventstore/errors.js';
import type { ExpectedRevision, StreamAppend } from '../eventstore/port.js';
import { MAX_DECISION_ATTEMPTS, pauseAfterConflict, toNewEvents, type CommandMetadata, type CommandServices, type DecidedAppend } from './command-handler.js';
import { loadLedger } from './ledgers.js';
import { BoundedMap } from '../lib/bounded-map.js';

/** The ledger a decision is made on: its balances, the revision they stand at, and which try this is. */
export interface LedgerView {
  state: LedgerState;
  expectedRevision: ExpectedRevision;
  /** 1 on the first try; above 1 after a conflict, when whatever was read before queueing must be read again */
  attempt: number;
}

/**
 * A decision on one ledger: what it reads of other streams (`read`, run for every decision of a
 * batch at once, always AFTER the ledger was loaded, so a stream it reads is never older than the
 * ledger it is decided with: a stale pair shows up as a conflict at append, never as a wrong
 * refusal), then `decide`: its appends (at most one to the ledger itself, on the view's state at the
 * view's revision) and its answer. A DomainError thrown by either refuses this decision alone;
 * nothing of it is written.
 */
export interface LedgerDecision<Result, Read = undefined> {
  /**
   * The other stream this decision reads and writes (a withdrawal, a deposit, a reference): two
   * decisions naming one stream are never in one batch, so the later one reads what the first wrote.
   */
  stream?: string;
  /**
   * `attempt` as in LedgerView: above 1, whatever the decision knew before it queued must be read
   * again. A read that needs nothing (a first try that relies on what it knew) answers at once.
   */
  read?: (attempt: number) => Read | Promise<Read>;
  decide: (ledger: LedgerView, now: Date, read: Read) => Promise<DecidedOnLedger<Result>> | DecidedOnLedger<Result>;
}

/** What a decision on a ledger appends, and the streams it was made on but does not write (`checks`). */
export interface DecidedOnLedger<Result> {
  appends: DecidedAppend[];
  result: Result;
  /**
   * each stream at the revision the decision relied on (a revision, or no_stream): the batch's
   * append checks them (StreamAppend with no events), so a stream that moved since refuses the
   * append, and the decision is tried again (`attempt` above 1), instead of a read before it
   */
  checks?: StreamCheck[];
}

export interface StreamCheck {
  stream: string;
  expectedRevision: ExpectedRevision;
}

interface Task {
  services: CommandServices;
  metadata: CommandMetadata;
  decision: LedgerDecision<object, unknown>;
  resolve: (value: object & { position: bigint | null }) => void;
  reject: (error: unknown) => void;
  attempt: number;
  /** decided again on its own: its last try conflicted on a stream of its own */
  solo: boolean;
  /** decided on the ledger as read from the store, never as memory holds it (see decideBatch) */
  freshLedger: boolean;
  /** when it last joined the queue, and when it was last decided (performance.now()), for the stage figures */
  queuedAt: number;
  decidedAt: number;
}

interface Accepted {
  task: Task;
  appends: StreamAppend[];
  /** the streams its append checks */
  checks: StreamCheck[];
  wrote: boolean;
  result: object;
}

/**
 * A batch being decided, to be appended in one: its decisions so far, the ledger it was decided on
 * (`base`) and the one its decisions leave (`view`), the ledger events and the other streams written.
 */
interface OpenBatch {
  base: KeptLedger;
  view: LedgerView;
  accepted: Accepted[];
  ledgerEvents: StreamAppend['events'];
  /** streams its decisions name or write: a later decision on one of them waits for its append */
  streams: Set<string>;
  /** the streams its decisions checked, at one revision each (a decision checking another waits) */
  checks: Map<string, ExpectedRevision>;
  /** decided on a ledger memory holds (or will hold): a refusal, or a step no revision checks, is decided again on the store's */
  fromMemory: boolean;
}

/** What an append, once answered, left to do: `landed` when the ledger stands where its batch left it. */
interface AppendOutcome {
  landed: boolean;
  /** decisions to be decided again, in order, before anything still waiting */
  putBack: Task[];
}

/** A batch's append on its way to the store: the ledger it will leave, the streams it writes, and its outcome. */
interface InFlight {
  leaves: KeptLedger;
  streams: ReadonlySet<string>;
  settled: Promise<AppendOutcome>;
  /** the outcome once answered (null before): the batcher looks at it before deciding more */
  outcome: AppendOutcome | null;
  /** the batcher's wait for this append or an arrival, while it waits on both: settled with the append */
  waiting: { resolve: (outcome: AppendOutcome) => void; reject: (error: unknown) => void } | null;
}

interface LedgerQueue {
  tasks: Task[];
  running: boolean;
  /** called when a task joins the queue (the batcher waits on it while an append is in flight) */
  arrived: (() => void) | null;
}

/** A ledger as this process last decided on it or read it: its state at that revision, in the store it was read from. */
interface KeptLedger {
  store: CommandServices['store'];
  state: LedgerState;
  expectedRevision: ExpectedRevision;
}

type Stage = 'queued' | 'load' | 'read' | 'decide' | 'behind' | 'append';

/** each task's time in a stage that began at `since` (ms, performance.now()); returns now */
const timed = (tasks: readonly Task[], stage: Stage, since: number): number => {
  const now = performance.now();
  tasks.forEach(() => ledgerStageDuration.observe({ stage }, (now - since) / 1000));
  return now;
};

/** tasks put back in the queue, counted by why */
const requeued = (tasks: Task[], cause: 'ledger_conflict' | 'stream_conflict' | 'stale_memory' | 'store_error' | 'previous_not_landed') => {
  if (tasks.length > 0) ledgerRetries.inc({ cause }, tasks.length);
  const now = performance.now();
  for (const task of tasks) task.queuedAt = now;
  return tasks;
};

const nothingBusy = () => false;

type ReadOutcome = { value: unknown } | { error: unknown };

/** one decision's read as an outcome (a failed read refuses that decision alone); a read that answered at once stays a plain value */
const readOutcome = ({ decision, attempt }: Task): ReadOutcome | Promise<ReadOutcome> => {
  try {
    const read = decision.read?.(attempt);
    return read instanceof Promise ? read.then((value: unknown) => ({ value }), (error: unknown) => ({ error })) : { value: read };
  } catch (error) {
    return { error };
  }
};

/**
 * The batch's reads, run at once; awaited only when one of them is pending: on a first try most
 * decisions read nothing, and every promise a request makes costs CPU (the log context's hook runs for each).
 */
const readsOf = (batch: readonly Task[]): ReadOutcome[] | Promise<ReadOutcome[]> => {
  const outcomes = batch.map(readOutcome);
  return outcomes.some((outcome) => outcome instanceof Promise) ? Promise.all(outcomes) : (outcomes as ReadOutcome[]);
};

/** whether a stream is named by any of these batches (asked of each stream instead of copying them all into one set) */
const busyIn =
  (...batches: (ReadonlySet<string> | undefined)[]) =>
  (stream: string): boolean =>
    batches.some((streams) => streams?.has(stream));

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
 * - Two commands that name the same other stream (two requests with one reference, two
 *   confirmations of one deposit) are never in one batch: the later one waits for the next.
 * - Another process moved the ledger: the batch is read and decided again. A conflict on another
 *   stream (a withdrawal, a deposit, a reference, or a stream a decision checks) sends the commands
 *   that write or check it alone to a next try (`attempt` above 1), read and decided again; the
 *   others go on as a batch.
 * - A decision's checks (streams it relied on but does not write, each at one revision) go into the
 *   batch's append as checks (StreamAppend with no events); two decisions checking one stream at
 *   different revisions, or one checking a stream another writes, are never in one batch.
 * - At most `maxQueuedPerLedger` commands wait on one ledger; beyond that SERVICE_UNAVAILABLE at once.
 *
 * - Pipelined: while a batch's append is in flight, what arrives is decided on the ledger that
 *   append will leave and appended after it landed (see `drain`).
 *
 * The ledger is kept in memory between batches (at most `maxKeptLedgers`), write-through: after a
 * successful append the batcher keeps the state it decided on, at the revision the append gave it;
 * a conflict on the ledger or a failed append drops it and the next batch reads the store. Memory
 * may lag another process's append: an append at its revision then conflicts (and is decided
 * again on the store), and a decision that would not append to the ledger on it (a refusal, or a
 * step that leaves the ledger alone, which no revision would check) is decided again on the
 * ledger read from the store, so nothing is refused or decided on a stale balance.
 */
export class LedgerBatcher {
  private readonly queues = new Map<string, LedgerQueue>();
  private readonly kept: BoundedMap<string, KeptLedger>;

  constructor(
    readonly maxQueuedPerLedger = 10_000,
    readonly maxBatch = 256,
    readonly maxKeptLedgers = 10_000,
  ) {
    this.kept = new BoundedMap(maxKeptLedgers);
  }

  decide<Result extends object, Read>(
    services: CommandServices,
    ledgerStream: string,
    metadata: CommandMetadata,
    decision: LedgerDecision<Result, Read>,
  ): Promise<Result & { position: bigint | null }> {
    const queue = this.queues.get(ledgerStream) ?? { tasks: [], running: false, arrived: null };
    if (queue.tasks.length >= this.maxQueuedPerLedger) {
      return Promise.reject(new DomainError('SERVICE_UNAVAILABLE', 'Too many commands are waiting on one ledger; retry shortly', { stream: ledgerStream }));
    }
    this.queues.set(ledgerStream, queue);
    const settled = new Promise<Result & { position: bigint | null }>((resolve, reject) => {
      queue.tasks.push({ services, metadata, decision: decision as LedgerDecision<object, unknown>, resolve: resolve as Task['resolve'], reject, attempt: 1, solo: false, freshLedger: false, queuedAt: performance.now(), decidedAt: 0 });
    });
    queue.arrived?.();
    if (!queue.running) void this.drain(ledgerStream, queue);
    return settled;
  }

  /** ledgers with commands running or waiting (for tests and diagnostics) */
  get activeLedgers(): number {
    return this.queues.size;
  }

  /**
   * One batch at a time is appended. While its append is in flight, the commands that arrive are
   * decided already, on the ledger that append will leave, into the next batch; that batch is
   * appended as soon as the one before it landed at the revision it was decided for (an answer that
   * came while more commands were being decided is looked at before anything more is decided, so the
   * reads of commands arriving meanwhile never hold a decided batch back). When it did not
   * land (a conflict, a failure, another revision), every decision made on it is put back, behind
   * the in-flight batch's own, and decided again: nothing is appended on a ledger the store does
   * not hold, and no decision overtakes one queued before it.
   */
  private async drain(ledgerStream: string, queue: LedgerQueue): Promise<void> {
    queue.running = true;
    let inFlight: InFlight | null = null;
    let open: OpenBatch | null = null;
    try {
      while (queue.tasks.length > 0 || inFlight || open) {
        if (inFlight?.outcome) {
          // answered while the loop decided: the batch decided on it goes out before anything more is decided
          open = this.afterAppend(queue, inFlight.outcome, open);
          inFlight = null;
          continue;
        }
        if (!inFlight) {
          if (open) {
            inFlight = this.appendBatch(ledgerStream, open);
            open = null;
          } else {
            open = await this.decideBatch(ledgerStream, queue, this.takeBatch(queue, nothingBusy, this.maxBatch), null, null);
          }
          continue;
        }
        const room = this.maxBatch - (open?.accepted.length ?? 0);
        const batch = queue.tasks.length > 0 && room > 0 && !this.needsStoredLedger(queue, inFlight) ? this.takeBatch(queue, busyIn(inFlight.streams, open?.streams), room) : [];
        if (batch.length > 0) {
          open = await this.decideBatch(ledgerStream, queue, batch, inFlight, open);
          continue;
        }
        // nothing to decide now: wait for the append, or for a new command while there is room for it
        const settled = await this.untilSettledOrArrival(queue, inFlight, room > 0 && queue.tasks.length === 0);
        if (settled) inFlight.outcome = settled;
      }
    } finally {
      queue.running = false;
      queue.arrived = null;
      if (this.queues.get(ledgerStream) === queue) this.queues.delete(ledgerStream);
    }
  }

  /** the open batch once the append before it was answered: null when that append did not land (its decisions are put back, after the append's own) */
  private afterAppend(queue: LedgerQueue, outcome: AppendOutcome, open: OpenBatch | null): OpenBatch | null {
    if (outcome.landed) return open;
    // decided on a ledger that was not written: decided again, after the batch it followed
    this.putBack(queue, [...outcome.putBack, ...requeued(open?.accepted.map(({ task }) => task) ?? [], 'previous_not_landed')]);
    return null;
  }

  /**
   * The append's outcome once answered; null when a command arrived first (only while `orArrival`).
   * One promise a wait, settled by whichever comes first (the append settles it through `waiting`):
   * the batcher waits once for each command that arrives while an append is in flight.
   */
  private untilSettledOrArrival(queue: LedgerQueue, inFlight: InFlight, orArrival: boolean): Promise<AppendOutcome | null> {
    if (!orArrival) return inFlight.settled;
    return new Promise<AppendOutcome | null>((resolve, reject) => {
      const done = () => {
        queue.arrived = null;
        inFlight.waiting = null;
      };
      queue.arrived = () => {
        done();
        resolve(null);
      };
      inFlight.waiting = {
        resolve: (outcome) => {
          done();
          resolve(outcome);
        },
        reject: (error) => {
          done();
          reject(error);
        },
      };
    });
  }

  /** the next decisions must wait for the append in flight to be answered: a try alone, one on the store's ledger, or one for another store */
  private needsStoredLedger(queue: LedgerQueue, inFlight: InFlight): boolean {
    const { tasks } = queue;
    if (tasks[0]!.solo || tasks[0]!.services.store !== inFlight.leaves.store) return true;
    // looked at where they stand, not copied: this runs for every arrival while an append is in flight
    for (let index = 0; index < Math.min(tasks.length, this.maxBatch); index++) if (tasks[index]!.freshLedger) return true;
    return false;
  }

  private putBack(queue: LedgerQueue, tasks: readonly Task[]) {
    queue.tasks.unshift(...tasks);
  }

  /** the first task alone if it must go solo; else, in order, up to `room` tasks with no stream named twice or `busy` (the rest wait, in order) */
  private takeBatch(queue: LedgerQueue, busy: (stream: string) => boolean, room: number): Task[] {
    if (queue.tasks[0]!.solo) return queue.tasks.splice(0, 1);
    const batch: Task[] = [];
    const waiting: Task[] = [];
    const named = new Set<string>();
    for (const task of queue.tasks) {
      const stream = task.decision.stream;
      if (batch.length >= room || task.solo || (stream !== undefined && (named.has(stream) || busy(stream)))) {
        waiting.push(task);
        continue;
      }
      batch.push(task);
      if (stream !== undefined) named.add(stream);
    }
    queue.tasks = waiting;
    return batch;
  }

  /** the batch a decision goes into: the open one, a new one on the ledger the append in flight will leave, on memory's, or on the store's */
  private async batchFor(ledgerStream: string, batch: Task[], inFlight: InFlight | null, open: OpenBatch | null): Promise<OpenBatch> {
    if (open) return open;
    const opened = (base: KeptLedger, fromMemory: boolean): OpenBatch => ({ base, view: { state: base.state, expectedRevision: base.expectedRevision, attempt: 1 }, accepted: [], ledgerEvents: [], streams: new Set(), checks: new Map(), fromMemory });
    if (inFlight) return opened(inFlight.leaves, true);
    const { store } = batch[0]!.services;
    const inMemory = this.kept.get(ledgerStream);
    if (inMemory?.store === store && !batch.some((task) => task.freshLedger)) return opened(inMemory, true);
    const loaded = { store, ...(await loadLedger(store, ledgerStream)) };
    this.kept.set(ledgerStream, loaded);
    return opened(loaded, false);
  }

  /**
   * The batch's reads and decisions, on `batchFor`'s ledger, added to the open batch (or a new one,
   * returned; null when nothing in it is to be appended); what is refused is answered, what must be
   * decided again is put back.
   */
  private async decideBatch(ledgerStream: string, queue: LedgerQueue, batch: Task[], inFlight: InFlight | null, open: OpenBatch | null): Promise<OpenBatch | null> {
    let since = performance.now();
    for (const task of batch) ledgerStageDuration.observe({ stage: 'queued' }, (since - task.queuedAt) / 1000);
    const now = batch[0]!.services.clock();
    let into: OpenBatch;
    try {
      into = await this.batchFor(ledgerStream, batch, inFlight, open);
    } catch (error) {
      this.kept.delete(ledgerStream);
      for (const task of batch) task.reject(error);
      return open;
    }
    if (!into.fromMemory && into.accepted.length === 0) since = timed(batch, 'load', since);
    const { fromMemory } = into;
    const deferred: Task[] = [];
    const pendingOrRead = readsOf(batch);
    const reads = pendingOrRead instanceof Promise ? await pendingOrRead : pendingOrRead;
    since = timed(batch, 'read', since);

    for (const [index, task] of batch.entries()) {
      const read = reads[index]!;
      let decision: Awaited<ReturnType<LedgerDecision<object, unknown>['decide']>>;
      const onStoredLedger = () => {
        task.freshLedger = true;
        deferred.push(task);
      };
      try {
        if ('error' in read) throw read.error;
        const decided = task.decision.decide({ ...into.view, attempt: task.attempt }, now, read.value);
        decision = decided instanceof Promise ? await decided : decided;
      } catch (error) {
        // refused on the ledger as memory holds it: decided again on the store's before it is refused
        if (fromMemory && error instanceof DomainError && !('error' in read)) onStoredLedger();
        else task.reject(error);
        continue;
      }
      const others = decision.appends.filter((append) => append.stream !== ledgerStream && append.events.length > 0);
      const onLedger = decision.appends.filter((append) => append.stream === ledgerStream && append.events.length > 0);
      if (fromMemory && onLedger.length === 0) {
        // no revision would check the ledger this was decided on
        onStoredLedger();
        continue;
      }
      const checks = decision.checks ?? [];
      if (others.some((append) => into.streams.has(append.stream) || into.checks.has(append.stream)) || checks.some((check) => into.streams.has(check.stream) || (into.checks.get(check.stream) ?? check.expectedRevision) !== check.expectedRevision)) {
        deferred.push(task);
        continue;
      }
      if (onLedger.length > 1 || (onLedger[0] && onLedger[0].expectedRevision !== into.view.expectedRevision) || checks.some((check) => check.stream === ledgerStream)) {
        task.reject(new Error(`a ledger decision must append once, at the revision it was given, and not check its ledger (${ledgerStream})`));
        continue;
      }
      for (const append of others) into.streams.add(append.stream);
      for (const check of checks) into.checks.set(check.stream, check.expectedRevision);
      if (task.decision.stream !== undefined) into.streams.add(task.decision.stream);
      const ledgerDomainEvents = (onLedger[0]?.events ?? []) as LedgerEvent[];
      into.ledgerEvents.push(...toNewEvents(ledgerDomainEvents, task.metadata, now));
      into.view = advance(into.view, ledgerDomainEvents);
      const appends = others.map(({ stream, expectedRevision, events }) => ({ stream, expectedRevision, events: toNewEvents(events, task.metadata, now) }));
      into.accepted.push({ task, appends, checks, wrote: appends.length > 0 || ledgerDomainEvents.length > 0, result: decision.result });
    }
    const decidedAt = timed(batch, 'decide', since);
    for (const task of batch) task.decidedAt = decidedAt;
    this.putBack(queue, requeued(deferred, 'stale_memory'));
    return into.accepted.length > 0 ? into : null;
  }

  /**
   * The batch's one atomic append, started now and answered when it settles: each decision resolved
   * or put back to be decided again; `landed` when the ledger is where the batch left it, at the
   * revision it was decided for (only then may a batch decided on it be appended).
   */
  private appendBatch(ledgerStream: string, batch: OpenBatch): InFlight {
    const { accepted, ledgerEvents, base, view, checks } = batch;
    ledgerBatchSize.observe(accepted.length);
    const appends = accepted.flatMap(({ appends: own }) => own);
    if (ledgerEvents.length > 0) appends.push({ stream: ledgerStream, expectedRevision: base.expectedRevision, events: ledgerEvents });
    // a batch that writes nothing checks nothing
    if (appends.length > 0) for (const [stream, expectedRevision] of checks) appends.push({ stream, expectedRevision, events: [] });
    const leaves = { store: base.store, state: view.state, expectedRevision: view.expectedRevision };
    const inFlight: InFlight = { leaves, streams: batch.streams, settled: this.settleAppend(ledgerStream, accepted, appends, base, leaves), outcome: null, waiting: null };
    inFlight.settled.then(
      (outcome) => {
        inFlight.outcome = outcome;
        inFlight.waiting?.resolve(outcome);
      },
      (error: unknown) => inFlight.waiting?.reject(error),
    );
    return inFlight;
  }

  private async settleAppend(ledgerStream: string, accepted: Accepted[], appends: StreamAppend[], base: KeptLedger, leaves: KeptLedger): Promise<AppendOutcome> {
    const { store } = base;
    if (appends.length === 0) {
      for (const { task, result } of accepted) task.resolve({ ...result, position: null });
      return { landed: true, putBack: [] };
    }
    const since = performance.now();
    for (const { task } of accepted) ledgerStageDuration.observe({ stage: 'behind' }, (since - task.decidedAt) / 1000);
    const ledgerMoved = appends.some(({ stream }) => stream === ledgerStream);
    try {
      const { position, streams } = await store.appendMany(appends).finally(() => timed(accepted.map(({ task }) => task), 'append', since));
      const landed = this.keepAfterAppend(ledgerStream, leaves, ledgerMoved ? streams.find(({ stream }) => stream === ledgerStream)?.revision : base.expectedRevision);
      for (const { task, result, wrote } of accepted) task.resolve({ ...result, position: wrote ? position : null });
      return { landed, putBack: [] };
    } catch (error) {
      // a conflict on the ledger: memory is behind; any other failure: the append may or may not be written
      if (!(error instanceof WrongExpectedRevisionError) || error.stream === ledgerStream) this.kept.delete(ledgerStream);
      if (!(error instanceof WrongExpectedRevisionError)) {
        // the store refused the batch for another reason (one decision's data it cannot hold, say):
        // one tenant's command must not fail its neighbours', so each is decided again alone, and
        // only the one the store refuses on its own gets the error
        if (accepted.length === 1) {
          accepted[0]!.task.reject(error);
          return { landed: false, putBack: [] };
        }
        for (const { task } of accepted) task.solo = true;
        return { landed: false, putBack: requeued(accepted.map(({ task }) => task), 'store_error') };
      }
      return { landed: false, putBack: await this.retryAfterConflict(ledgerStream, accepted, error) };
    }
  }

  /** write-through: the state decided on, kept at the revision the store answered (when they disagree, nothing is kept); true when kept */
  private keepAfterAppend(ledgerStream: string, leaves: KeptLedger, revision: ExpectedRevision | undefined): boolean {
    const landed = revision !== undefined && revision === leaves.expectedRevision;
    if (landed) this.kept.set(ledgerStream, leaves);
    else this.kept.delete(ledgerStream);
    return landed;
  }

  /** ledgers kept in memory (for tests and diagnostics) */
  get keptLedgers(): number {
    return this.kept.size;
  }

  /** the decisions of a batch that conflicted, to be decided again (those that tried too often are refused); after a pause when the ledger moved */
  private async retryAfterConflict(ledgerStream: string, accepted: Accepted[], conflict: WrongExpectedRevisionError): Promise<Task[]> {
    const onLedger = conflict.stream === ledgerStream;
    const owners = new Set(accepted.filter(({ appends, checks }) => [...appends, ...checks].some((named) => named.stream === conflict.stream)).map(({ task }) => task));
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
    if (onLedger) await pauseAfterConflict(Math.max(...retry.map((task) => task.attempt), 1));
    return requeued(retry, onLedger ? 'ledger_conflict' : 'stream_conflict');
  }
}

/** The process's batcher: every command module shares it, so all writers of one ledger take turns. */
export const sharedLedgerBatcher = new LedgerBatcher();

/** A decision on a ledger, in its turn and batched with the others queued on it. */
export const onLedger = <Result extends object, Read = undefined>(
  services: CommandServices & { ledgerBatcher?: LedgerBatcher | undefined },
  ledgerStream: string,
  metadata: CommandMetadata,
  decision: LedgerDecision<Result, Read>,
) => (services.ledgerBatcher ?? sharedLedgerBatcher).decide(services, ledgerStream, metadata, decision);
