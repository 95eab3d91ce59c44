import { advanceWithdrawal, type ProcessingProgress, type WithdrawalProcessingServices } from '../../application/withdrawal-processing.js';
import { ADVISORY_LOCK_NAMESPACES, withSessionAdvisoryLock } from '../../db/advisory-locks.js';
import type { PoolTarget } from '../../db/pool.js';
import { loadAggregate } from '../../application/command-handler.js';
import { streamCategories, streams } from '../../domain/streams.js';
import { withdrawalDecider } from '../../domain/withdrawal/decide.js';
import type { WithdrawalEvent } from '../../domain/withdrawal/withdrawal.js';
import type { Logger } from '../../log.js';
import { backoffDelayMs, pauseUnlessStopped } from '../../workers/pause.js';

export interface WithdrawalProcessorOptions {
  services: WithdrawalProcessingServices;
  /** the database the processor takes its lock in (its own session) */
  database: PoolTarget;
  /** the pause between passes */
  pollMs?: number;
  /** delay before the n-th consecutive retry of a withdrawal (or a pass) that threw */
  failureDelayMs?: (attempt: number) => number;
  /** how often a standby processor tries to become the active one */
  standbyRetryMs?: number;
}

export interface ProcessorPassResult {
  examined: number;
  finished: number;
  waiting: number;
  deferred: number;
  failed: number;
}

const LOCK_NAMESPACE = ADVISORY_LOCK_NAMESPACES.withdrawalProcessors;
const defaultFailureDelayMs = (attempt: number) => backoffDelayMs(attempt, 500, 60_000);
/** the events that make a withdrawal ready to process: requested with one signer, or approved to the threshold */
const READY_TYPES = ['WithdrawalRequested', 'WithdrawalApproved'];

/**
 * The withdrawal processor of one chain. It follows the withdrawal events itself (no read model in
 * between): a withdrawal that becomes Pending joins its work list, and leaves it once finished. It
 * takes them in the order they became Pending, one in flight per organization (its settlement
 * wallet's nonce, its Bitcoin outputs, its XRP sequence), so two of its transactions never spend the
 * same thing. Only the processor holding the chain's advisory lock works; others wait on standby.
 */
export class WithdrawalProcessor {
  private readonly stopController = new AbortController();
  private running: Promise<void> | null = null;
  private readonly logger: Logger;
  /** withdrawal id → organization, in the order they became ready */
  private readonly open = new Map<string, string>();
  private readonly retries = new Map<string, { attempts: number; notBefore: number }>();
  private position = 0n;
  state: 'idle' | 'standby' | 'running' | 'failing' | 'stopped' = 'idle';

  constructor(private readonly options: WithdrawalProcessorOptions) {
    this.logger = options.services.logger.child({ withdrawalProcessor: options.services.chain.id });
  }

  start(): void {
    this.running ??= this.loop();
  }

  /** finishes the withdrawal in hand, then releases the lock */
  async stop(): Promise<void> {
    this.stopController.abort();
    await this.running;
    this.state = 'stopped';
  }

  /** one pass, if this processor can take the chain's lock (tests); null when another is active */
  async runPass(): Promise<ProcessorPassResult | null> {
    let result: ProcessorPassResult | null = null;
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
          this.logger.info('withdrawal processor: active');
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
        this.logger.error('withdrawal processor: pass failed, retrying', { error, failures });
        await pauseUnlessStopped((this.options.failureDelayMs ?? defaultFailureDelayMs)(failures), signal);
      }
    }
  }

  /** new withdrawal events since the last pass: the ones that became Pending on this chain join the list */
  private async follow(): Promise<void> {
    const { store, chain } = this.options.services;
    for (;;) {
      const batch = await store.readAll({ afterPosition: this.position, maxCount: 500, filter: { categories: [streamCategories.withdrawal], types: READY_TYPES } });
      if (batch.length === 0) return;
      for (const recorded of batch) {
        this.position = recorded.position;
        const event = { type: recorded.type, data: recorded.data } as WithdrawalEvent;
        if (event.type === 'WithdrawalRequested' && event.data.chainId === chain.id && event.data.status === 'Pending') this.open.set(event.data.id, event.data.orgId);
        if (event.type === 'WithdrawalApproved' && event.data.status === 'Pending') {
          // an approval names neither chain nor organization: the stream does
          const { state } = await loadAggregate(store, streams.withdrawal(event.data.id), withdrawalDecider);
          if (state.status !== 'None' && state.chainId === chain.id) this.open.set(state.id, state.orgId);
        }
      }
    }
  }

  private async pass(): Promise<ProcessorPassResult> {
    await this.follow();
    const { services } = this.options;
    const result: ProcessorPassResult = { examined: 0, finished: 0, waiting: 0, deferred: 0, failed: 0 };
    const busy = new Set<string>();
    for (const [id, orgId] of [...this.open]) {
      if (this.stopController.signal.aborted) break;
      const retry = this.retries.get(id);
      if (retry && retry.notBefore > services.clock().getTime()) {
        busy.add(orgId);
        continue;
      }
      // an organization's later withdrawals wait for its earlier one (its funds, its nonce)
      if (busy.has(orgId)) {
        result.deferred++;
        continue;
      }
      result.examined++;
      let progress: ProcessingProgress;
      try {
        progress = await advanceWithdrawal(services, id);
        this.retries.delete(id);
      } catch (error) {
        result.failed++;
        const attempts = (retry?.attempts ?? 0) + 1;
        const delayMs = (this.options.failureDelayMs ?? defaultFailureDelayMs)(attempts);
        this.retries.set(id, { attempts, notBefore: services.clock().getTime() + delayMs });
        busy.add(orgId);
        this.logger.warn('withdrawal processor: step failed; retrying later', { withdrawalId: id, error, attempts, delayMs });
        continue;
      }
      if (progress.outcome === 'finished') {
        result.finished++;
        this.open.delete(id);
        continue;
      }
      if (progress.outcome === 'waiting') result.waiting++;
      else result.deferred++;
      busy.add(orgId);
    }
    return result;
  }

  private withLock(work: () => Promise<void>): Promise<boolean> {
    const { chain } = this.options.services;
    return withSessionAdvisoryLock(
      { database: this.options.database, namespace: LOCK_NAMESPACE, key: chain.id, applicationName: `withdrawal-processor:${chain.id}`, logger: this.logger },
      work,
    );
  }
}
