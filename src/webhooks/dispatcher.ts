import type { Kysely } from 'kysely';
import type { Database } from '../db/database.js';
import { NamedStatements } from '../db/named-statements.js';
import { createPool, type PoolTarget } from '../db/pool.js';
import type { Logger } from '../log.js';
import { claimFairShares, FIRST_ORGANIZATION, failExhaustedDeliveries, msUntilNextDue, recordAttemptOutcomes, type AttemptOutcome, type ClaimCursor, type ClaimedDelivery, type RecordedOutcome } from './claims.js';
import { Coalescer } from '../db/coalescer.js';
import { WEBHOOK_DUE_CHANNEL } from './outbox.js';
import { WebhookSender } from './send.js';
import { ChannelListener } from '../db/channel-listener.js';
import { Wakeup } from '../lib/wakeup.js';
import { webhookDeliveriesTotal } from '../observability/metrics.js';

export interface WebhookDispatcherOptions {
  /** the read-model database that holds the outbox */
  db: Kysely<Database>;
  /** where to open the LISTEN session for WEBHOOK_DUE_CHANNEL */
  listen: PoolTarget;
  /** decrypts the organizations' signing secrets (keyring.encryptionKey) */
  encryptionKey: Buffer;
  /** production: deliveries connect only to public addresses, checked at connect time */
  refuseInternalAddresses?: boolean;
  /** delay before retry n is retryDelaysMs[n - 1]; a delivery gets retryDelaysMs.length + 1 attempts */
  retryDelaysMs: readonly number[];
  logger: Logger;
  /** a 2xx must arrive within this (SPEC §6.1: 30 s) */
  timeoutMs?: number;
  /** sends in flight at once, in this process */
  concurrency?: number;
  /** how long a claimed attempt stays leased beyond `timeoutMs` before another dispatcher may take it over */
  leaseMarginMs?: number;
  /** the longest sleep without a notification: a safety net for a lost LISTEN session */
  pollIntervalMs?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
/**
 * Sends in flight: beyond the 128 sockets an origin gets (send.ts), a receiver's next requests wait
 * in its agent, counted against their time-out, so the sends never wait for the next claim; and,
 * refilled when a quarter is free, claims and outcomes come in batches of about 90 and 75 under a
 * backlog (56 and 48 at 128 in flight): fewer statements, and less PostgreSQL CPU, per delivery.
 */
const DEFAULT_CONCURRENCY = 256;
const DEFAULT_LEASE_MARGIN_MS = 15_000;
const DEFAULT_POLL_INTERVAL_MS = 5_000;
const MAX_OUTCOMES_PER_STATEMENT = 500;
/** sends that ended but whose outcome is not yet recorded, per send slot: beyond it, nothing more is claimed */
const UNRECORDED_PER_SLOT = 4;
/** claims per statement: never more than the free send slots, and never more than this */
const MAX_CLAIM_BATCH = 128;
/** after a claim that came up short although something is due (rows locked by another dispatcher) */
const CONTENDED_WAIT_MS = 10;
/**
 * After a claim that took all that was due (no backlog), the next waits at least this long, however
 * soon a delivery falls due: in a steady stream each claim then takes what gathered meanwhile
 * instead of one or two deliveries, and its statements (planned at every call) are shared by more.
 */
const SHORT_CLAIM_GAP_MS = 10;
const failureWaitMs = (failures: number) => Math.min(30_000, 100 * 2 ** Math.min(failures, 9));

/**
 * Sends the webhook outbox (CONTRACT §7): the first attempt at once, retries after
 * `retryDelaysMs`, `failed` after the last. Any number of dispatchers, in any number of processes,
 * can run over one database: an attempt is claimed, leased and counted in one statement before
 * it is sent, so no attempt is sent twice, and one whose process dies mid-send is taken up again
 * when its lease expires (it counts as made).
 *
 * An organization without a webhook URL: its deliveries wait unattempted (outbox.ts,
 * WAITING_FOR_URL) and are never claimed until a URL is set. A delivery that was due before the
 * URL went missing (enqueued before deliveries waited) fails its attempt with `no webhook URL
 * configured` and follows the normal schedule.
 */
export class WebhookDispatcher {
  private readonly timeoutMs: number;
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly pollIntervalMs: number;
  private readonly maxAttempts: number;
  private readonly wakeup = new Wakeup();
  private readonly listener: ChannelListener;
  /** sends in flight: each holds a slot from its claim until its answer (or failure) arrives */
  private readonly inFlight = new Set<Promise<void>>();
  /**
   * Outcomes being recorded. A send's slot is free once the send ended: the next delivery goes out
   * while the outcome waits for its statement (under load a database round trip takes longer than
   * a send to a receiver nearby). Its lease holds until it is recorded, as before.
   */
  private readonly recording = new Set<Promise<void>>();
  private readonly maxUnrecorded: number;
  private readonly shutdown = new AbortController();
  /** sends every attempt; keeps each organization's opened signing secret (send.ts) */
  private readonly sender: WebhookSender;
  private readonly logger: Logger;
  /** the claim and msUntilNextDue as named statements on a connection of their own: planned once, not at every call (1.0-1.5 and 0.3-0.5 ms a call) */
  private readonly claims: NamedStatements;
  /** attempt outcomes written in groups: one statement (and commit) for those that end while one is written */
  private readonly outcomes: Coalescer<{ claim: ClaimedDelivery; outcome: AttemptOutcome }, RecordedOutcome>;
  /** claim when at least this many slots are free (or none is busy): claims come in batches, not one per finished send */
  private readonly refillAt: number;
  /** the last claim took all it asked for, or an organization's whole share: more is due */
  private backlog = false;
  /** where the next claim's round over the organizations starts (claims.ts: a fair share each) */
  private claimCursor: ClaimCursor = FIRST_ORGANIZATION;
  /**
   * When the exhausted-delivery check (claims.ts) runs next (performance.now()). Such a delivery
   * appears only when a lease expires on a last attempt, rare (its dispatcher died, or could not
   * record the outcome), so the check does not run before every claim: once per poll interval,
   * and when the earliest lease msUntilNextDue reads expires (the dispatcher wakes for it). The
   * first claim checks.
   */
  private exhaustedCheckAt = 0;
  private stopping = false;
  private running: Promise<void> | null = null;

  constructor(private readonly options: WebhookDispatcherOptions) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.concurrency = Math.max(1, options.concurrency ?? DEFAULT_CONCURRENCY);
    this.leaseMs = this.timeoutMs + (options.leaseMarginMs ?? DEFAULT_LEASE_MARGIN_MS);
    this.pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    this.maxAttempts = options.retryDelaysMs.length + 1;
    this.refillAt = Math.max(1, Math.ceil(this.concurrency / 4));
    this.maxUnrecorded = this.concurrency * UNRECORDED_PER_SLOT;
    this.sender = new WebhookSender({
      encryptionKey: options.encryptionKey,
      timeoutMs: this.timeoutMs,
      refuseInternalAddresses: options.refuseInternalAddresses ?? false,
      shutdown: this.shutdown.signal,
    });
    this.outcomes = new Coalescer((attempts) => recordAttemptOutcomes(options.db, attempts, options.retryDelaysMs), MAX_OUTCOMES_PER_STATEMENT);
    this.logger = options.logger.child({ component: 'webhooks' });
    this.claims = new NamedStatements(createPool(options.listen, { max: 1, purpose: 'webhook-claims' }), 'webhook-claim');
    this.listener = new ChannelListener(options.listen, WEBHOOK_DUE_CHANNEL, () => this.wakeup.wake(), this.logger);
  }

  start(): void {
    if (this.stopping) throw new Error('a stopped webhook dispatcher cannot start again');
    this.running ??= this.loop();
  }

  /**
   * Claims nothing more and lets the sends in flight finish, for at most `graceMs` (default: the
   * send time-out). Sends still waiting then are cut off and recorded as failed attempts, retried
   * on schedule by whichever dispatcher runs next; so a shutdown never leaves a lease to expire.
   */
  async stop(options: { graceMs?: number } = {}): Promise<void> {
    this.stopping = true;
    this.wakeup.wake();
    await this.running;
    const cutOff = setTimeout(() => this.shutdown.abort(), options.graceMs ?? this.timeoutMs);
    await Promise.allSettled([...this.inFlight]);
    clearTimeout(cutOff);
    // every send has its answer: what is left on the connections is bodies being drained
    await this.sender.close();
    await Promise.allSettled([...this.recording]);
    await this.listener.close();
    await this.claims.end();
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      this.listener.ensureListening();
      this.wakeup.reset();
      let waitMs: number;
      try {
        waitMs = await this.dispatchDue();
        failures = 0;
      } catch (error) {
        failures++;
        waitMs = failureWaitMs(failures);
        this.logger.error('webhooks: dispatch failed; retrying', { error, failures, retryInMs: waitMs });
      }
      // a wake meanwhile is not lost: it ends the wait below at once
      if (!this.backlog && failures === 0 && !this.stopping) await new Promise((resolve) => setTimeout(resolve, SHORT_CLAIM_GAP_MS));
      if (waitMs > 0) await this.wakeup.wait(waitMs);
    }
  }

  /** claims what is due and free slots allow, starts sending it; answers how long to sleep */
  private async dispatchDue(): Promise<number> {
    const free = this.concurrency - this.inFlight.size;
    // too few free slots: a finishing send wakes the loop (so a backlog is claimed in batches, not row by row)
    if (free <= 0 || (free < this.refillAt && this.inFlight.size > 0)) return this.pollIntervalMs;
    // the database is behind with recording outcomes: claims wait for it too (a recorded outcome wakes the loop)
    if (this.recording.size >= this.maxUnrecorded) return this.pollIntervalMs;
    const { db } = this.options;
    if (performance.now() >= this.exhaustedCheckAt) {
      this.exhaustedCheckAt = performance.now() + this.pollIntervalMs;
      const exhausted = await failExhaustedDeliveries(db, { maxAttempts: this.maxAttempts, limit: MAX_CLAIM_BATCH });
      if (exhausted > 0) this.logger.warn('webhooks: deliveries failed: their last attempt was interrupted', { count: exhausted });
    }
    const limit = Math.min(free, MAX_CLAIM_BATCH);
    const claimed = await claimFairShares(db, { limit, maxAttempts: this.maxAttempts, leaseMs: this.leaseMs, cursor: this.claimCursor }, this.claims);
    for (const claim of claimed.deliveries) this.track(this.inFlight, this.attempt(claim));
    this.claimCursor = claimed.cursor;
    this.backlog = claimed.deliveries.length === limit || claimed.shareFilled;
    if (this.backlog) return 0;
    const nextDue = await msUntilNextDue(db, this.claims);
    if (nextDue === null) return this.pollIntervalMs;
    // a lease expires then (or has): its attempt may have been the last, so look for an exhausted delivery at that wake
    if (nextDue.leaseExpiresInMs !== null) this.exhaustedCheckAt = Math.min(this.exhaustedCheckAt, performance.now() + Math.max(0, nextDue.leaseExpiresInMs));
    const dueInMs = nextDue.ms;
    // timers may fire a little early; the extra millisecond saves a claim that finds nothing
    if (dueInMs > 0) return Math.min(this.pollIntervalMs, Math.ceil(dueInMs) + 1);
    return CONTENDED_WAIT_MS;
  }

  /** `work` is in `set` until it settles; then the loop wakes (a slot, or room for outcomes, came free) */
  private track(set: Set<Promise<void>>, work: Promise<void>): void {
    set.add(work);
    void work.finally(() => {
      set.delete(work);
      this.wakeup.wake();
    });
  }

  /** one attempt's send; its outcome is recorded on its own (record), so the slot frees at the answer. Never rejects. */
  private async attempt(claim: ClaimedDelivery): Promise<void> {
    try {
      const outcome = await this.sender.send(claim);
      this.track(this.recording, this.record(claim, outcome));
    } catch (error) {
      // the sender answers every failure as an outcome; this is a bug, and the lease's expiry retries the attempt
      this.logger.error('webhooks: an attempt failed unexpectedly; it will be retried when its lease expires', { deliveryId: claim.id, orgId: claim.orgId, error });
    }
  }

  /** records an attempt's outcome; never rejects (a failure to record it lets the lease expire) */
  private async record(claim: ClaimedDelivery, outcome: AttemptOutcome): Promise<void> {
    const fields = { deliveryId: claim.id, orgId: claim.orgId, type: claim.type, attempt: claim.attempt };
    try {
      const recorded = await this.outcomes.add({ claim, outcome });
      webhookDeliveriesTotal.inc({ outcome: recorded });
      const details = { ...fields, statusCode: outcome.statusCode, error: outcome.error, durationMs: Math.round(outcome.durationMs), outcome: recorded };
      if (recorded === 'failed') this.logger.warn('webhooks: delivery failed after its last attempt', details);
      // an attempt the receiver refused or never answered: the integrator's operator may need to look
      else if (recorded === 'retry') this.logger.warn('webhooks: delivery attempt failed; retrying later', details);
      else if (recorded === 'superseded') this.logger.warn('webhooks: attempt ended after its lease was lost; outcome not applied', details);
      else this.logger.debug('webhooks: attempt', details);
    } catch (error) {
      this.logger.error('webhooks: cannot record an attempt; it will be retried when its lease expires', { ...fields, error });
    }
  }
}
