import type { Kysely } from 'kysely';
import { advanceSweep, claimedAddresses, type SenderClaims, type SweepServices } from '../../application/sweeps.js';
import { loadAggregate } from '../../application/command-handler.js';
import type { Database } from '../../db/database.js';
import type { PoolTarget } from '../../db/pool.js';
import { streams } from '../../domain/streams.js';
import { sweepDecider } from '../../domain/sweep/decide.js';
import type { Logger } from '../../log.js';
import { ADVISORY_LOCK_NAMESPACES, withSessionAdvisoryLock } from '../../db/advisory-locks.js';
import { backoffDelayMs, pauseUnlessStopped } from '../../workers/pause.js';

export interface SweeperOptions {
  services: SweepServices;
  /** the database the sweeper takes its lock in (its own session) */
  database: PoolTarget;
  /** the pause between passes */
  pollMs?: number;
  /** a sweep waiting for gas is looked at again after this long (by the services' clock) */
  gasRetryMs?: number;
  /** open sweeps looked at per pass */
  batchSize?: number;
  /** delay before the n-th consecutive retry of a sweep (or a pass) that threw */
  failureDelayMs?: (attempt: number) => number;
  /** how often a standby sweeper tries to become the active one */
  standbyRetryMs?: number;
}

export interface PassResult {
  examined: number;
  finished: number;
  waiting: number;
  deferred: number;
  failed: number;
}

const LOCK_NAMESPACE = ADVISORY_LOCK_NAMESPACES.sweepers;
const defaultFailureDelayMs = (attempt: number) => backoffDelayMs(attempt, 500, 60_000);


/**
 * The sweeper of one EVM or Tron chain: works off the sweep queue in the queue's order, in bounded
 * passes. Only the sweeper holding the chain's session advisory lock works; others wait on standby
 * and take over when it stops or dies. Even two active sweepers could not send a sweep twice: each
 * signature is recorded with an expected revision before it is sent.
 */
export class Sweeper {
  private readonly stopController = new AbortController();
  private running: Promise<void> | null = null;
  private readonly logger: Logger;
  state: 'idle' | 'standby' | 'running' | 'failing' | 'stopped' = 'idle';

  constructor(private readonly options: SweeperOptions) {
    this.logger = options.services.logger.child({ sweeper: options.services.chain.id });
  }

  start(): void {
    this.running ??= this.loop();
  }

  /** finishes the sweep in hand, then releases the lock */
  async stop(): Promise<void> {
    this.stopController.abort();
    await this.running;
    this.state = 'stopped';
  }

  /** one pass, if this sweeper can take the chain's lock (tests, and the CLI later); null when another is active */
  async runPass(): Promise<PassResult | null> {
    let result: PassResult | null = null;
    const active = await this.withLock(async () => {
      result = await this.pass();
    });
    return active ? result : null;
  }

  private async loop(): Promise<void> {
    const signal = this.stopController.signal;
    let failures = 0;
    while (!signal.aborted) {
      try {
        const active = await this.withLock(async () => {
          this.state = 'running';
          this.logger.info('sweeper: active');
          while (!signal.aborted) {
            await this.pass();
            failures = 0;
            await pauseUnlessStopped(this.options.pollMs ?? 1000, signal);
          }
        });
        if (!active) {
          this.state = 'standby';
          await pauseUnlessStopped(this.options.standbyRetryMs ?? 2000, signal);
        }
      } catch (error) {
        failures++;
        this.state = 'failing';
        this.logger.error('sweeper: pass failed, retrying', { error, failures });
        await pauseUnlessStopped((this.options.failureDelayMs ?? defaultFailureDelayMs)(failures), signal);
      }
    }
  }

  private async pass(): Promise<PassResult> {
    const { services } = this.options;
    const { db, chain, clock } = services;
    const now = clock();
    const rows = await db
      .selectFrom('sweep_queue')
      .select(['tx_hash', 'output_index', 'attempts'])
      .where('chain_id', '=', chain.id)
      .where('done_at', 'is', null)
      .where('next_attempt_at', '<=', now)
      .orderBy('seq')
      .limit(this.options.batchSize ?? 100)
      .execute();
    // the senders unfinished sweeps hold, before any of them moves on
    const claims: SenderClaims = new Map();
    for (const row of rows) {
      const { state } = await loadAggregate(services.store, streams.sweep(chain.id, row.tx_hash, row.output_index), sweepDecider);
      for (const address of claimedAddresses(chain, state)) claims.set(address, streams.sweep(chain.id, row.tx_hash, row.output_index));
    }
    const result: PassResult = { examined: rows.length, finished: 0, waiting: 0, deferred: 0, failed: 0 };
    for (const row of rows) {
      if (this.stopController.signal.aborted) break;
      const ref = { chainId: chain.id, txHash: row.tx_hash, index: row.output_index };
      try {
        const progress = await advanceSweep(services, ref, claims);
        const at = clock();
        if (progress.outcome === 'finished') {
          result.finished++;
          await this.updateRow(db, ref, { done_at: at, attempts: 0 });
        } else if (progress.outcome === 'waiting' && progress.for === 'gas') {
          result.waiting++;
          await this.updateRow(db, ref, { next_attempt_at: new Date(at.getTime() + (this.options.gasRetryMs ?? 30_000)), attempts: 0 });
        } else {
          // confirmations to come or a sender to be freed: looked at again next pass
          if (progress.outcome === 'waiting') result.waiting++;
          else result.deferred++;
          if (row.attempts !== 0) await this.updateRow(db, ref, { attempts: 0 });
        }
      } catch (error) {
        result.failed++;
        const attempts = row.attempts + 1;
        const delayMs = (this.options.failureDelayMs ?? defaultFailureDelayMs)(attempts);
        this.logger.warn('sweeper: sweep step failed; retrying later', { deposit: `${ref.txHash}:${ref.index}`, error, attempts, delayMs });
        await this.updateRow(db, ref, { attempts, next_attempt_at: new Date(clock().getTime() + delayMs) });
      }
    }
    return result;
  }

  private updateRow(db: Kysely<Database>, ref: { chainId: string; txHash: string; index: number }, change: { done_at?: Date; next_attempt_at?: Date; attempts?: number }) {
    return db
      .updateTable('sweep_queue')
      .set(change)
      .where('chain_id', '=', ref.chainId)
      .where('tx_hash', '=', ref.txHash)
      .where('output_index', '=', ref.index)
      .execute();
  }

  /** runs `work` holding the chain's lock on a dedicated session; false if another sweeper holds it */
  private withLock(work: () => Promise<void>): Promise<boolean> {
    const { chain } = this.options.services;
    return withSessionAdvisoryLock(
      { database: this.options.database, namespace: LOCK_NAMESPACE, key: chain.id, applicationName: `sweeper:${chain.id}`, logger: this.logger },
      work,
    );
  }
}
