import { randomBytes } from 'node:crypto';
import { toNewEvents } from '../../../src/application/command-handler.js';
import { organizationWalletSpace } from '../../../src/application/organization-wallets.js';
import { createDepositAddressBook } from '../../../src/chains/address-book.js';
import type { Signer } from '../../../src/chains/signer/signer.js';
import { streamCategories } from '../../../src/domain/streams.js';
import { categoryOf, type EventStore, type StreamAppend } from '../../../src/eventstore/port.js';
import type { Keyring } from '../../../src/security/keyring.js';
import { generatePassword, hashPassword } from '../../../src/security/passwords.js';
import { num } from '../table.js';
import { HistoryBook } from './book.js';
import type { HistoryContext, HistoryStep } from './context.js';
import { HISTORY_KEY_SPACES, organizationHistory } from './organization-history.js';

export interface FillOptions {
  store: EventStore;
  signer: Pick<Signer, 'addressOf' | 'accountXpub'>;
  keyring: Keyring;
  /** about this many events are written (the activities under way when it is reached are finished) */
  events: number;
  organizations: number;
  progress: (message: string) => void;
  signal?: AbortSignal;
}

export interface FillFigures {
  events: number;
  /** the service's own appends the history is made of (each one atomic, as the service made it) */
  steps: number;
  /** store appends the steps were written in */
  batches: number;
  organizations: number;
  ms: number;
}

/** simulated time between one step of an organization and its next */
const ROUND_MS = 5 * 60_000;
/** events of one store append: larger appends cost more per event in eventstore.append_batch (its bookkeeping grows with the batch) */
const MAX_BATCH_EVENTS = 300;
/** events per step on average (a rough figure, to start the history that many rounds before now) */
const EVENTS_PER_STEP = 1.7;

/**
 * Several steps in one atomic append. A stream appears once in an append, so a step that touches a
 * stream already in the batch starts the next one; except a derivation counter, every account's
 * first step touches one, whose later events join its entry (each still at its own revision, in
 * order): a counter's events say nothing about the other streams, so their positions relative to
 * them do not matter to any reader.
 */
class AppendBatch {
  private readonly byStream = new Map<string, StreamAppend>();
  private appends: StreamAppend[] = [];
  events = 0;
  steps = 0;

  accepts(step: HistoryStep): boolean {
    return step.appends.every(({ stream }) => !this.byStream.has(stream) || categoryOf(stream) === streamCategories.derivationCounter);
  }

  add(step: HistoryStep, at: Date): void {
    for (const { stream, expectedRevision, events } of step.appends) {
      const recorded = toNewEvents(events, step.metadata, at);
      this.events += recorded.length;
      const entry = this.byStream.get(stream);
      if (entry) entry.events.push(...recorded);
      else {
        const append = { stream, expectedRevision, events: recorded };
        this.byStream.set(stream, append);
        this.appends.push(append);
      }
    }
    this.steps++;
  }

  take(): StreamAppend[] {
    const appends = this.appends;
    this.appends = [];
    this.byStream.clear();
    this.events = 0;
    this.steps = 0;
    return appends;
  }
}

/**
 * Fills the event store with a realistic history: `organizations` organizations, each bootstrapped
 * and then doing business round by round (organization-history.ts), their steps interleaved as a
 * busy service's would be and decided by the domain's own deciders on the state the fill keeps in
 * memory. The steps go to the store in atomic appends of about MAX_BATCH_EVENTS events, one in
 * flight while the next is built; every stream at the exact revision decided on, so a store that moved
 * meanwhile (a service writing to it) refuses the fill rather than take a wrong history.
 */
export const fillHistory = async (options: FillOptions): Promise<FillFigures> => {
  const { store, progress } = options;
  const started = performance.now();
  const book = new HistoryBook();
  await book.loadCounters(store, [...HISTORY_KEY_SPACES, ...HISTORY_KEY_SPACES.map(organizationWalletSpace)]);
  const rounds = Math.ceil(options.events / options.organizations / EVENTS_PER_STEP);
  const start = new Date(Date.now() - rounds * ROUND_MS);
  const context: HistoryContext = {
    book,
    clock: { now: start },
    stopping: false,
    signer: options.signer,
    addresses: createDepositAddressBook(options.signer),
    keyring: options.keyring,
    passwordHash: await hashPassword(generatePassword()),
    start,
  };
  const runId = randomBytes(3).toString('hex');
  let histories = Array.from({ length: options.organizations }, (_, ordinal) => organizationHistory(context, ordinal, runId));

  const figures: FillFigures = { events: 0, steps: 0, batches: 0, organizations: options.organizations, ms: 0 };
  const batch = new AppendBatch();
  let inFlight: Promise<unknown> = Promise.resolve(null);
  let lastReport = performance.now();
  const flush = async () => {
    if (batch.events === 0) return;
    figures.events += batch.events;
    figures.steps += batch.steps;
    figures.batches++;
    const appends = batch.take();
    const failure = await inFlight;
    if (failure) throw failure;
    inFlight = store.appendMany(appends).then(
      () => null,
      (error: unknown) => error,
    );
    if (performance.now() - lastReport > 5_000) {
      lastReport = performance.now();
      const seconds = (lastReport - started) / 1000;
      progress(`history: ${num(figures.events)} of ${num(options.events)} events (${num(figures.events / seconds)}/s)`);
    }
  };

  while (histories.length > 0) {
    options.signal?.throwIfAborted();
    context.clock.now = new Date(context.clock.now.getTime() + ROUND_MS);
    const going: typeof histories = [];
    for (const history of histories) {
      const next = history.next();
      if (next.done) continue;
      going.push(history);
      if (!batch.accepts(next.value)) await flush();
      batch.add(next.value, context.clock.now);
      if (batch.events >= MAX_BATCH_EVENTS) await flush();
    }
    histories = going;
    if (figures.events + batch.events >= options.events) context.stopping = true;
  }
  await flush();
  const failure = await inFlight;
  if (failure) throw failure;
  figures.ms = performance.now() - started;
  return figures;
};
