import { advanceWithdrawal, type ProcessingStep, type WithdrawalProcessingServices } from './advance.js';
import { PayoutBatches } from './bitcoin-batch.js';
import { InFlightBook, inFlightPolicyOf, letsLaterOnesGo, type InFlightPolicy } from './in-flight.js';
import { inParallel } from '../../lib/in-parallel.js';
import { ADVISORY_LOCK_NAMESPACES } from '../../db/advisory-locks.js';
import { loadAggregate } from '../../application/command-handler.js';
import { streams } from '../../domain/streams.js';
import { withdrawalDecider } from '../../domain/withdrawal/decide.js';
import type { Logger } from '../../log.js';
import { ChainPassWorker, emptyPassResult, type ChainPassWorkerOptions, type PassResult } from '../chain-pass-worker.js';
import { OpenWithdrawals } from './open-withdrawals.js';
import type { SharedEventsReader } from '../shared-events-reader.js';
import { recordWorkerFirstPass } from '../../observability/metrics.js';

export interface WithdrawalProcessorOptions extends ChainPassWorkerOptions {
  services: WithdrawalProcessingServices;
  /** the reader of the ready withdrawal events the process's processors share (default: one of its own) */
  events?: SharedEventsReader;
}

export type ProcessorPassResult = PassResult;

/** at most this many deep-enough withdrawals advanced side by side at the start of a pass (their completions share appends) */
const DEEP_ONES_SIDE_BY_SIDE = 32;
/** while a pass signs, the deep-enough withdrawals are taken again this often */
const DEEP_ONES_EVERY_MS = 1000;

/**
 * The withdrawal processor of one chain. It follows the withdrawal events itself (no read model in
 * between): a withdrawal that becomes Pending joins its work list, and leaves it once finished; the
 * list is saved at the end of a pass, so a start reads only the events after it (./open-withdrawals.ts). It
 * takes them in the order they became Pending; how many of an organization's are in flight at once
 * is the chain family's rule (./in-flight.ts): one at a time on Bitcoin (its outputs), pipelined on
 * EVM and XRP (consecutive nonces or sequences of one wallet, each past every recorded one), in
 * parallel on Tron. Only the processor holding the chain's advisory lock works; others wait on
 * standby (one signer per settlement wallet).
 *
 * Before anything of an organization is signed in a pass, the book of what is in flight knows every
 * withdrawal of the pass's work list, so no recorded nonce is taken twice, even one whose
 * transaction a crash left unsent. The book is begun anew each time the lock is taken (another
 * processor may have recorded transactions since this one last held it) and learns a withdrawal
 * either from its own steps or, for one it has not seen, in one of two ways:
 * - it reads the withdrawal's stream, when the withdrawal became ready (Pending) at or before the
 *   store's head as read just after the lock was taken: a processor that held the lock before may
 *   have recorded a transaction for it and died before sending it;
 * - it reads nothing, when it became ready after that head: its ready event was not committed when
 *   the lock was taken, and a processor records a transaction only for a withdrawal it read ready
 *   while holding the lock, so only this processor could have, and this one had not yet (it joined
 *   the list marked, the pass that takes its mark is the first to look at it, and a payout batch
 *   that could sign it drops its mark first).
 */
export class WithdrawalProcessor extends ChainPassWorker {
  private readonly logger: Logger;
  /** the withdrawals that became Pending on the chain and are not finished, in that order */
  readonly open: OpenWithdrawals;
  private readonly retries = new Map<string, { attempts: number; notBefore: number }>();
  /**
   * withdrawal id → the head at which its mined transaction is deep enough: until the chain's head
   * reaches it, a pass does not look at the withdrawal (no read of its stream, no receipt asked for)
   */
  private readonly deepAtHead = new Map<string, number>();
  private inFlight = new InFlightBook();
  /** Bitcoin: an organization's waiting withdrawals are paid by one transaction (./bitcoin-batch.ts) */
  private readonly payoutBatches: PayoutBatches | null;

  constructor(private readonly options: WithdrawalProcessorOptions) {
    const logger = options.services.logger.child({ withdrawalProcessor: options.services.chain.id });
    super({ name: 'withdrawal-processor', chainId: options.services.chain.id, lockNamespace: ADVISORY_LOCK_NAMESPACES.withdrawalProcessors, logger, options });
    this.logger = logger;
    this.open = new OpenWithdrawals(options.services, options.events);
    this.payoutBatches = options.services.chain.family === 'bitcoin' ? new PayoutBatches(options.services, logger) : null;
  }

  /** a new tenure: the book begun anew, and what becomes ready after the store's head as it now stands is marked (see the class's comment) */
  protected override async lockTaken(): Promise<void> {
    this.inFlight = new InFlightBook();
    this.open.markJoinersAfter(null);
    this.open.markJoinersAfter(await this.options.services.store.headPosition());
  }

  protected override lockGivenUp(): void {
    this.open.markJoinersAfter(null);
  }

  /** the organization's open withdrawals, in the order they became ready, for a payout batch (which may sign any of them: their marks dropped) */
  private openOf(orgId: string): string[] {
    const ids = this.open.ids().filter((id) => this.open.orgOf(id) === orgId);
    this.open.dropMarks(ids);
    return ids;
  }

  /**
   * The work list as this pass takes it, each withdrawal of it known to the book: one it does not
   * know is read, unless it joined marked (ready after the lock was taken: nothing recorded for it)
   */
  private async readNewcomers(): Promise<string[]> {
    const { store } = this.options.services;
    const ids = this.open.ids();
    for (const id of ids) {
      const unrecorded = this.open.takeMark(id);
      if (this.inFlight.knows(id)) continue;
      if (unrecorded) {
        this.inFlight.noteUnsigned(id);
        continue;
      }
      const { state } = await loadAggregate(store, streams.withdrawal(id), withdrawalDecider);
      this.inFlight.note(id, state);
    }
    return ids;
  }

  /** one pass over the open list, then the list saved at the position it was followed to (only the lock's holder passes) */
  protected async pass(): Promise<PassResult> {
    await this.open.follow(this.stopController.signal);
    const ids = await this.readNewcomers();
    const result = await this.advanceOpen(ids);
    await this.open.saveCheckpoint(this.options.services.clock());
    this.logStarted();
    return result;
  }

  private startedLogged = false;
  private readonly createdAtMs = Date.now();

  /** once, after its first pass: where its open list came from and what that cost (operators watch start-up time) */
  private logStarted(): void {
    if (this.startedLogged) return;
    this.startedLogged = true;
    const { startedFrom, eventsRead, size } = this.open;
    const ms = Date.now() - this.createdAtMs;
    recordWorkerFirstPass('withdrawal-processor', this.options.services.chain.id, ms, eventsRead);
    this.logger.info('withdrawal processor: started', { checkpoint: startedFrom === null ? null : startedFrom.toString(), eventsRead, open: size, ms });
  }

  /**
   * The chain's head once per pass, asked only when a withdrawal waits for its mined transaction's
   * depth (one question for all of them, instead of a look at each); unknown (the node did not
   * answer) looks at them all.
   */
  private headOfPass(): () => Promise<number> {
    let head: Promise<number> | null = null;
    return () =>
      (head ??= this.options.services.gateway.head().then(
        (header) => header.number,
        () => Number.POSITIVE_INFINITY,
      ));
  }

  /**
   * The withdrawals whose mined transaction the chain's head has made deep enough, taken side by
   * side: what is left of each is its completion, which signs nothing new (a reorg that dropped it:
   * the recorded bytes sent again), and completions made side by side share the ledger's appends.
   * A pass takes them first, and again every DEEP_ONES_EVERY_MS while it signs, so a confirmed
   * withdrawal does not wait behind a long signing run. Only under the pipelined and parallel rules
   * (on Bitcoin an organization has one in flight at a time, and a payout batch is its own). Each
   * one's outcome is in the book before the pass signs anything more, and one that holds its
   * organization's later ones back (./in-flight.ts) holds them for the rest of the pass; one of an
   * organization held back already is left to the walk. Skips those in `taken`, and adds those it takes.
   */
  private async advanceDeepOnes(ids: readonly string[], policy: InFlightPolicy, taken: Set<string>, busy: Set<string>, result: PassResult): Promise<void> {
    if (policy === 'one-at-a-time') return;
    const now = this.options.services.clock().getTime();
    const head = this.headOfPass();
    const deep: string[] = [];
    for (const id of ids) {
      const deepAt = this.deepAtHead.get(id);
      const orgId = this.open.orgOf(id);
      // an organization the pass holds back stays as the walk finds it
      if (deepAt === undefined || taken.has(id) || orgId === undefined || busy.has(orgId)) continue;
      const retry = this.retries.get(id);
      if ((retry && retry.notBefore > now) || (await head()) < deepAt) continue;
      deep.push(id);
    }
    await inParallel(deep, DEEP_ONES_SIDE_BY_SIDE, async (id) => {
      if (this.stopping()) return;
      taken.add(id);
      const orgId = this.open.orgOf(id)!;
      if (await this.step(id, orgId, policy, result)) busy.add(orgId);
    });
  }

  /** one withdrawal advanced as far as it goes now, and what came of it noted (the list, the book, its retries); true when it holds its organization's later ones back */
  private async step(id: string, orgId: string, policy: InFlightPolicy, result: PassResult): Promise<boolean> {
    const { services } = this.options;
    this.deepAtHead.delete(id);
    result.examined++;
    let progress: ProcessingStep;
    try {
      await this.payoutBatches?.beforeAdvancing(orgId, id, this.openOf(orgId));
      progress = await advanceWithdrawal(services, id, this.inFlight.of(orgId, id));
      this.retries.delete(id);
    } catch (error) {
      result.failed++;
      const attempts = (this.retries.get(id)?.attempts ?? 0) + 1;
      const delayMs = this.failureDelayMs(attempts);
      this.retries.set(id, { attempts, notBefore: services.clock().getTime() + delayMs });
      // it may have recorded a transaction before it threw: read again before the next pass signs anything
      this.inFlight.forget(id);
      this.logger.warn('withdrawal processor: step failed; retrying later', { withdrawalId: id, error, attempts, delayMs });
      return true;
    }
    if (progress.outcome === 'finished') {
      result.finished++;
      this.open.finish(id);
      this.inFlight.forget(id);
      await this.payoutBatches?.finished(progress.withdrawal, (other) => advanceWithdrawal(services, other));
      return false;
    }
    if (progress.outcome === 'waiting') {
      result.waiting++;
      this.inFlight.note(id, progress.withdrawal);
      if (progress.deepAtHead !== undefined) this.deepAtHead.set(id, progress.deepAtHead);
    } else {
      result.deferred++;
      this.inFlight.forget(id); // put off after its last step: read again before the next pass signs anything
    }
    return !letsLaterOnesGo(policy, progress);
  }

  /** `ids`: the work list as the pass took it (one that joins meanwhile waits for the next pass) */
  private async advanceOpen(ids: readonly string[]): Promise<PassResult> {
    this.payoutBatches?.startPass();
    const { services } = this.options;
    const policy = inFlightPolicyOf(services.chain.family);
    const result = emptyPassResult();
    const busy = new Set<string>();
    const head = this.headOfPass();
    const deepOnes = new Set<string>();
    await this.advanceDeepOnes(ids, policy, deepOnes, busy, result);
    let deepOnesAt = performance.now();
    for (const id of ids) {
      if (this.stopping()) break;
      if (performance.now() - deepOnesAt >= DEEP_ONES_EVERY_MS) {
        await this.advanceDeepOnes(ids, policy, deepOnes, busy, result);
        deepOnesAt = performance.now();
      }
      const orgId = this.open.orgOf(id);
      if (orgId === undefined || deepOnes.has(id)) continue; // left the list since the pass began, or taken with the deep ones
      const retry = this.retries.get(id);
      if (retry && retry.notBefore > services.clock().getTime()) {
        busy.add(orgId);
        continue;
      }
      // an organization's later withdrawals wait for an earlier one its chain's rule says they must (its funds, its nonce)
      if (busy.has(orgId)) {
        result.deferred++;
        continue;
      }
      // mined, not yet deep: it stays where the last look left it (a reorg that drops it is seen, and the same bytes sent again, at that depth)
      const deepAt = this.deepAtHead.get(id);
      if (deepAt !== undefined && (await head()) < deepAt) {
        result.waiting++;
        if (!letsLaterOnesGo(policy, { outcome: 'waiting', for: 'confirmations' })) busy.add(orgId);
        continue;
      }
      if (await this.step(id, orgId, policy, result)) busy.add(orgId);
    }
    return result;
  }
}
