import { withSessionAdvisoryLock } from '../db/advisory-locks.js';
import type { PoolTarget } from '../db/pool.js';
import type { Logger } from '../log.js';
import { backoffDelayMs, msUntilNextTick, pauseUnlessStopped } from '../lib/pause.js';

export interface ChainPassWorkerOptions {
  /** the database the worker takes its lock in (its own session) */
  database: PoolTarget;
  /** the pause between passes */
  pollMs?: number;
  /**
   * passes start on the clock's multiples of pollMs instead of pollMs after the last one ended, so
   * the workers of a process that share a read of the store (the withdrawal processors) pass
   * together and their passes share one read instead of one each
   */
  alignPasses?: boolean;
  /** delay before the n-th consecutive retry of an item (or a pass) that threw */
  failureDelayMs?: (attempt: number) => number;
  /** how often a standby worker tries to become the active one */
  standbyRetryMs?: number;
}

/** What a pass did: items looked at, finished, waiting (for gas, funds, confirmations), put off, failed. */
export interface PassResult {
  examined: number;
  finished: number;
  waiting: number;
  deferred: number;
  failed: number;
}

export const emptyPassResult = (examined = 0): PassResult => ({ examined, finished: 0, waiting: 0, deferred: 0, failed: 0 });

const defaultFailureDelayMs = (attempt: number) => backoffDelayMs(attempt, 500, 60_000);

/**
 * A worker of one chain that works in bounded passes (the sweeper, the withdrawal processor). Only
 * the instance holding the chain's session advisory lock works; the others wait on standby and take
 * over when it stops or dies. A pass that throws is retried with backoff; stop() lets the item in
 * hand finish, then releases the lock.
 */
export abstract class ChainPassWorker {
  state: 'idle' | 'standby' | 'running' | 'failing' | 'stopped' = 'idle';
  protected readonly stopController = new AbortController();
  private running: Promise<void> | null = null;
  /** the session holding the chain's lock ended while this instance worked: the lock may be another's already */
  private lockLost = false;

  protected constructor(
    private readonly worker: { name: string; chainId: string; lockNamespace: number; logger: Logger; options: ChainPassWorkerOptions },
  ) {}

  /** one pass over the work at hand */
  protected abstract pass(): Promise<PassResult>;

  /**
   * Called once the chain's lock is taken, before the first pass under it: a new tenure, after
   * which no other instance works on the chain until this one gives the lock up. Another instance
   * may have worked since this one last held it (runPass takes and gives up the lock each call).
   */
  protected async lockTaken(): Promise<void> {}

  /** called when the lock is given up (a stop, a pass that threw, the end of runPass): the tenure is over */
  protected lockGivenUp(): void {}

  /** the item in hand is the last of the pass: a stop was asked for, or the lock's session was lost */
  protected stopping(): boolean {
    return this.stopController.signal.aborted || this.lockLost;
  }

  /** the delay before an item that failed `attempts` times in a row is tried again */
  protected failureDelayMs(attempts: number): number {
    return (this.worker.options.failureDelayMs ?? defaultFailureDelayMs)(attempts);
  }

  start(): void {
    this.running ??= this.loop();
  }

  async stop(): Promise<void> {
    this.stopController.abort();
    await this.running;
    this.state = 'stopped';
  }

  /** one pass, if this instance can take the chain's lock (tests, the CLI); null when another is active */
  async runPass(): Promise<PassResult | null> {
    let result: PassResult | null = null;
    const active = await this.withLock(async () => {
      result = await this.pass();
    });
    return active ? result : null;
  }

  private async loop(): Promise<void> {
    const { name, logger, options } = this.worker;
    const signal = this.stopController.signal;
    let failures = 0;
    while (!signal.aborted) {
      try {
        const active = await this.withLock(async () => {
          this.state = 'running';
          logger.info(`${name}: active`);
          while (!signal.aborted) {
            await this.pass();
            this.throwIfLockLost();
            failures = 0;
            const pollMs = options.pollMs ?? 1000;
            await pauseUnlessStopped(options.alignPasses ? msUntilNextTick(Date.now(), pollMs) : pollMs, signal);
            this.throwIfLockLost();
          }
        });
        if (!active) {
          this.state = 'standby';
          await pauseUnlessStopped(options.standbyRetryMs ?? 2000, signal);
        }
      } catch (error) {
        // a stop request ended the pass (a long first read of the history): nothing failed
        if (signal.aborted) break;
        failures++;
        this.state = 'failing';
        logger.error(`${name}: pass failed, retrying`, { error, failures });
        await pauseUnlessStopped(this.failureDelayMs(failures), signal);
      }
    }
  }

  /** a lost lock ends the tenure as a failed pass does: retried, a new tenure if the lock is still (or again) free */
  private throwIfLockLost(): void {
    if (this.lockLost) throw new Error(`${this.worker.name}: the session holding the chain's lock was lost; working no further under it`);
  }

  /**
   * Runs `work` holding the chain's lock: a tenure. Its session ending (the server ended it, the
   * connection broke) frees the lock for a standby at once, so the tenure ends with the item in hand.
   */
  private withLock(work: () => Promise<void>): Promise<boolean> {
    const { name, chainId, lockNamespace, logger, options } = this.worker;
    return withSessionAdvisoryLock({ database: options.database, namespace: lockNamespace, key: chainId, applicationName: `${name}:${chainId}`, logger }, async (session) => {
      this.lockLost = false;
      const lost = () => (this.lockLost = true);
      session.once('end', lost);
      try {
        await this.lockTaken();
        await work();
      } finally {
        session.off('end', lost);
        this.lockGivenUp();
      }
    });
  }
}
