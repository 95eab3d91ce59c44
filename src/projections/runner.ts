import type { Kysely } from 'kysely';
import pg from 'pg';
import { databaseOnClient, type Database } from '../db/database.js';
import type { PoolTarget } from '../db/pool.js';
import type { EventStore, EventWithoutMetadata, Subscription } from '../eventstore/port.js';
import type { Logger } from '../log.js';
import { applyBatch, CheckpointMovedError, projectionSession, readCheckpoint, RESET_CHANNEL } from './checkpoint.js';
import { BatchMemory, LIVE_REMEMBERED_ENTRIES, type Projection } from './projection.js';
import { ADVISORY_LOCK_NAMESPACES, withSessionAdvisoryLock } from '../db/advisory-locks.js';
import { backoffDelayMs, pauseUnlessStopped } from '../lib/pause.js';
import { SharedProjectionReads } from './shared-reads.js';
import { recordProjectionBatch } from '../observability/metrics.js';

export type RunnerState = 'idle' | 'standby' | 'running' | 'failing' | 'stopped';

export interface ProjectionRunnerOptions {
  projection: Projection;
  store: EventStore;
  /** the read of the store this runner shares with the process's other runners; default: one of its own */
  reads?: SharedProjectionReads;
  /** the read-model database; the runner opens its own session there */
  database: PoolTarget;
  logger: Logger;
  batchSize?: number;
  /** how often a standby runner tries to become the active one */
  standbyRetryMs?: number;
  /** delay before retrying after the n-th consecutive failure */
  failureDelayMs?: (attempt: number) => number;
}

const defaultFailureDelayMs = (attempt: number) => backoffDelayMs(attempt, 250, 30_000);
const LOCK_NAMESPACE = ADVISORY_LOCK_NAMESPACES.projections;
/**
 * Events per batch at most. The subscription reads again as soon as a batch is applied, so under a
 * backlog batches fill up to this (handleBatch makes a full one cost a few statements), while a
 * quiet stream still gives batches of one or two events at once.
 */
const DEFAULT_BATCH_SIZE = 1000;


/**
 * Runs one projection: catch-up from its checkpoint in bounded batches, then live. Only the
 * runner holding the projection's advisory lock (a session lock on its own connection) works;
 * others wait on standby, so across processes one runner is active per projection.
 */
export class ProjectionRunner {
  state: RunnerState = 'idle';
  position = 0n;
  private readonly stopController = new AbortController();
  private subscription: Subscription<EventWithoutMetadata> | null = null;
  private running: Promise<void> | null = null;
  private readonly logger: Logger;

  constructor(private readonly options: ProjectionRunnerOptions) {
    this.logger = options.logger.child({ projection: options.projection.name });
  }

  start(): void {
    this.running ??= this.loop();
  }

  /** finishes the batch in flight, then releases the lock and the session */
  async stop(): Promise<void> {
    this.stopController.abort();
    await this.subscription?.close();
    await this.running;
    this.state = 'stopped';
  }

  /**
   * Applies every event up to the head as it is now, if this runner can take the lock
   * (used by the CLI and by tests); returns false when another runner is active. An aborted
   * `stopSignal` ends it between two batches, each applied batch committed with its checkpoint.
   */
  async catchUp(stopSignal?: AbortSignal): Promise<boolean> {
    return this.withSession(async (db, client) => {
      const session = projectionSession(client);
      const head = await this.options.store.headPosition();
      this.position = await readCheckpoint(db, this.options.projection.name);
      while (this.position < head && !stopSignal?.aborted) {
        const batch = await this.options.store.readAll({
          afterPosition: this.position,
          maxCount: this.options.batchSize ?? DEFAULT_BATCH_SIZE,
          filter: this.options.projection.filter,
        });
        if (batch.length === 0) break;
        this.position = await applyBatch(session, this.options.projection, batch, this.position);
      }
    });
  }

  private async loop(): Promise<void> {
    const signal = this.stopController.signal;
    let failures = 0;
    while (!signal.aborted) {
      try {
        const active = await this.withSession((db, client) => this.follow(db, client, signal));
        if (!active) {
          this.state = 'standby';
          await pauseUnlessStopped(this.options.standbyRetryMs ?? 2000, signal);
        }
        failures = 0;
      } catch (error) {
        if (error instanceof CheckpointMovedError) {
          this.logger.info('projection: checkpoint reset (rebuild); following from there', { position: error.actual });
          continue;
        }
        failures++;
        this.state = 'failing';
        this.logger.error('projection: batch failed; nothing of it was committed, retrying', { error, failures });
        await pauseUnlessStopped((this.options.failureDelayMs ?? defaultFailureDelayMs)(failures), signal);
      }
    }
  }

  private async follow(db: Kysely<Database>, client: pg.Client, signal: AbortSignal): Promise<void> {
    const { projection, store, batchSize } = this.options;
    this.position = await readCheckpoint(db, projection.name);
    this.state = 'running';
    this.logger.info('projection: active', { position: this.position });
    if (signal.aborted) return;
    const reads = this.options.reads ?? new SharedProjectionReads(store, [projection.filter], { batchSize: batchSize ?? DEFAULT_BATCH_SIZE });
    const subscription = reads.follow({ afterPosition: this.position, filter: projection.filter, maxBatchSize: batchSize ?? DEFAULT_BATCH_SIZE });
    this.subscription = subscription;
    // stop() may come at any moment, also before this subscription existed
    signal.addEventListener('abort', () => void subscription.close(), { once: true });
    // a rebuild resets the checkpoint; an idle runner would only notice at its next batch
    client.on('notification', (message) => {
      if (message.channel === RESET_CHANNEL && message.payload === projection.name) void subscription.close();
    });
    await client.query(`listen ${RESET_CHANNEL}`);
    const session = projectionSession(client);
    // what this session's batches wrote, while it alone writes the projection's tables: a batch that
    // fails (or finds the checkpoint moved) ends this follow, and with it the memory
    const memory = new BatchMemory(LIVE_REMEMBERED_ENTRIES);
    const maxBatchSize = batchSize ?? DEFAULT_BATCH_SIZE;
    const batches = subscription[Symbol.asyncIterator]();
    let next = batches.next();
    try {
      for (;;) {
        const { done, value: ready } = await next;
        if (done || signal.aborted) break;
        // the batch became ready while the last one was applied: what was handed since goes with it
        const batch = ready.length < maxBatchSize ? ready.concat(subscription.takeQueued(maxBatchSize - ready.length)) : ready;
        // the following batch is read (on the pool, or by the shared read) while this one is applied
        // (on this session): under load an event waits for one round of both, not for the one then the other
        next = batches.next();
        const applyStartedMs = performance.now();
        this.position = await applyBatch(session, projection, batch, this.position, memory);
        recordProjectionBatch(projection.name, batch.length, (performance.now() - applyStartedMs) / 1000, batch[batch.length - 1]!.recordedAt);
      }
    } finally {
      // a batch read ahead is dropped: the next runner reads it again from the checkpoint
      next.catch(() => undefined);
      this.subscription = null;
      await subscription.close();
    }
  }

  /**
   * runs `work` on a dedicated session holding the projection's lock; false if the lock is taken.
   * The session pipelines: a batch's statements go out together wherever the next does not wait
   * for an answer (see applyBatch). Its commits do not wait for the WAL to reach the disk
   * (`synchronous_commit = off`, this session only): everything it writes is derived from events
   * the store holds durably, and a batch lost by a server crash is lost whole, rows, outbox and
   * checkpoint together (the server recovers a consistent prefix of its log), so the runner
   * applies those events again from its checkpoint, exactly once in effect, as after a rollback.
   */
  private withSession(work: (db: Kysely<Database>, client: pg.Client) => Promise<void>): Promise<boolean> {
    const { database, projection } = this.options;
    return withSessionAdvisoryLock(
      { database, namespace: LOCK_NAMESPACE, key: projection.name, applicationName: `projection:${projection.name}`, logger: this.logger, pipeline: true },
      async (client) => {
        await client.query('set synchronous_commit = off');
        await work(databaseOnClient(client), client);
      },
    );
  }
}
