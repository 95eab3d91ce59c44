import { sql, type Kysely } from 'kysely';
import { advanceSweep, claimedAddresses, type LoadedSweep, type SenderClaims, type SweepServices } from './advance.js';
import { loadAggregate } from '../../application/command-handler.js';
import type { Database } from '../../db/database.js';
import type { DepositRef } from '../../domain/deposit/deposit.js';
import { streams } from '../../domain/streams.js';
import { sweepDecider } from '../../domain/sweep/decide.js';
import type { Logger } from '../../log.js';
import { ADVISORY_LOCK_NAMESPACES } from '../../db/advisory-locks.js';
import { ChainPassWorker, emptyPassResult, type ChainPassWorkerOptions, type PassResult } from '../chain-pass-worker.js';

export interface SweeperOptions extends ChainPassWorkerOptions {
  services: SweepServices;
  /** a sweep waiting for gas is looked at again after this long (by the services' clock) */
  gasRetryMs?: number;
  /** open sweeps looked at per pass */
  batchSize?: number;
}

export type { PassResult };

/**
 * The sweeper of one EVM or Tron chain: works off the sweep queue in the queue's order, in bounded
 * passes. Only the sweeper holding the chain's session advisory lock works; others wait on standby
 * and take over when it stops or dies. Even two active sweepers could not send a sweep twice: each
 * signature is recorded with an expected revision before it is sent.
 */
export class Sweeper extends ChainPassWorker {
  private readonly logger: Logger;

  constructor(private readonly options: SweeperOptions) {
    const logger = options.services.logger.child({ sweeper: options.services.chain.id });
    super({ name: 'sweeper', chainId: options.services.chain.id, lockNamespace: ADVISORY_LOCK_NAMESPACES.sweepers, logger, options });
    this.logger = logger;
  }

  protected async pass(): Promise<PassResult> {
    const { services } = this.options;
    const { db, chain, clock } = services;
    const now = clock();
    // open queue rows (the sweep has no final event yet), unless this sweeper found one not to sweep or is waiting to retry it
    const rows = await db
      .selectFrom('sweep_queue as queue')
      .leftJoin('sweep_attempts as attempt', (join) =>
        join.onRef('attempt.chain_id', '=', 'queue.chain_id').onRef('attempt.tx_hash', '=', 'queue.tx_hash').onRef('attempt.output_index', '=', 'queue.output_index'),
      )
      .select(['queue.tx_hash', 'queue.output_index', sql<number>`coalesce(attempt.attempts, 0)`.as('attempts')])
      .where('queue.chain_id', '=', chain.id)
      .where('queue.done_at', 'is', null)
      .where('attempt.done_at', 'is', null)
      .where(sql<Date>`coalesce(attempt.next_attempt_at, queue.queued_at)`, '<=', now)
      .orderBy('queue.seq')
      .limit(this.options.batchSize ?? 100)
      .execute();
    // the senders unfinished sweeps hold, before any of them moves on
    const claims: SenderClaims = new Map();
    const loaded = new Map<(typeof rows)[number], LoadedSweep>();
    for (const row of rows) {
      const sweep = await loadAggregate(services.store, streams.sweep(chain.id, row.tx_hash, row.output_index), sweepDecider);
      loaded.set(row, sweep);
      for (const address of claimedAddresses(chain, sweep.state)) claims.set(address, streams.sweep(chain.id, row.tx_hash, row.output_index));
    }
    const result = emptyPassResult(rows.length);
    for (const row of rows) {
      if (this.stopping()) break;
      const ref = { chainId: chain.id, txHash: row.tx_hash, index: row.output_index };
      try {
        // the pass's read of the sweep stands in for its first step's: this sweeper alone writes it while it holds the chain
        const progress = await advanceSweep(services, ref, claims, loaded.get(row));
        const at = clock();
        if (progress.outcome === 'finished') {
          result.finished++;
          // an ended sweep's final event closes its queue row (the projection); a deposit not to sweep has no event: noted here
          if (progress.status === 'NotSweepable') await this.schedule(db, ref, { attempts: 0, next_attempt_at: at, done_at: at });
          else await this.forget(db, ref);
        } else if (progress.outcome === 'waiting' && progress.for === 'gas') {
          result.waiting++;
          await this.schedule(db, ref, { attempts: 0, next_attempt_at: new Date(at.getTime() + (this.options.gasRetryMs ?? 30_000)), done_at: null });
        } else {
          // confirmations to come or a sender to be freed: looked at again next pass
          if (progress.outcome === 'waiting') result.waiting++;
          else result.deferred++;
          if (row.attempts !== 0) await this.forget(db, ref);
        }
      } catch (error) {
        result.failed++;
        const attempts = row.attempts + 1;
        const delayMs = this.failureDelayMs(attempts);
        this.logger.warn('sweeper: sweep step failed; retrying later', { deposit: `${ref.txHash}:${ref.index}`, error, attempts, delayMs });
        await this.schedule(db, ref, { attempts, next_attempt_at: new Date(clock().getTime() + delayMs), done_at: null });
      }
    }
    return result;
  }

  /** the sweeper's own schedule for one deposit (sweep_attempts: no projection owns it, a rebuild keeps it) */
  private schedule(db: Kysely<Database>, ref: DepositRef, change: { attempts: number; next_attempt_at: Date; done_at: Date | null }) {
    return db
      .insertInto('sweep_attempts')
      .values({ chain_id: ref.chainId, tx_hash: ref.txHash, output_index: ref.index, ...change })
      .onConflict((conflict) => conflict.columns(['chain_id', 'tx_hash', 'output_index']).doUpdateSet(change))
      .execute();
  }

  /** back to the default: due whenever its queue row is open */
  private forget(db: Kysely<Database>, ref: DepositRef) {
    return db.deleteFrom('sweep_attempts').where('chain_id', '=', ref.chainId).where('tx_hash', '=', ref.txHash).where('output_index', '=', ref.index).execute();
  }
}
