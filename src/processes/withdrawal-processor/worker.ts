import { advanceWithdrawal, type ProcessingStep, type WithdrawalProcessingServices } from './advance.js';
import { PayoutBatches } from './bitcoin-batch.js';
import { InFlightBook, inFlightPolicyOf, letsLaterOnesGo } from './in-flight.js';
import { ADVISORY_LOCK_NAMESPACES } from '../../db/advisory-locks.js';
import { loadAggregate } from '../../application/command-handler.js';
import { streamCategories, streams } from '../../domain/streams.js';
import { withdrawalDecider } from '../../domain/withdrawal/decide.js';
import type { WithdrawalEvent } from '../../domain/withdrawal/withdrawal.js';
import type { Logger } from '../../log.js';
import { ChainPassWorker, emptyPassResult, type ChainPassWorkerOptions, type PassResult } from '../chain-pass-worker.js';

export interface WithdrawalProcessorOptions extends ChainPassWorkerOptions {
  services: WithdrawalProcessingServices;
}

export type ProcessorPassResult = PassResult;
/** the events that make a withdrawal ready to process: requested with one signer, or approved to the threshold */
const READY_TYPES = ['WithdrawalRequested', 'WithdrawalApproved'];

/**
 * The withdrawal processor of one chain. It follows the withdrawal events itself (no read model in
 * between): a withdrawal that becomes Pending joins its work list, and leaves it once finished. It
 * takes them in the order they became Pending; how many of an organization's are in flight at once
 * is the chain family's rule (./in-flight.ts): one at a time on Bitcoin (its outputs), pipelined on
 * EVM and XRP (consecutive nonces or sequences of one wallet, each past every recorded one), in
 * parallel on Tron. Before anything of an organization is signed in a pass, every withdrawal of its
 * work list has been read once (the book of what is in flight), so no recorded nonce is taken
 * twice, even one whose transaction a crash left unsent. Only the processor holding the chain's
 * advisory lock works; others wait on standby (one signer per settlement wallet).
 */
export class WithdrawalProcessor extends ChainPassWorker {
  private readonly logger: Logger;
  /** withdrawal id → organization, in the order they became ready */
  private readonly open = new Map<string, string>();
  private readonly retries = new Map<string, { attempts: number; notBefore: number }>();
  private readonly inFlight = new InFlightBook();
  private position = 0n;
  /** Bitcoin: an organization's waiting withdrawals are paid by one transaction (./bitcoin-batch.ts) */
  private readonly payoutBatches: PayoutBatches | null;

  constructor(private readonly options: WithdrawalProcessorOptions) {
    const logger = options.services.logger.child({ withdrawalProcessor: options.services.chain.id });
    super({ name: 'withdrawal-processor', chainId: options.services.chain.id, lockNamespace: ADVISORY_LOCK_NAMESPACES.withdrawalProcessors, logger, options });
    this.logger = logger;
    this.payoutBatches = options.services.chain.family === 'bitcoin' ? new PayoutBatches(options.services, logger) : null;
  }

  /** the organization's open withdrawals, in the order they became ready */
  private openOf(orgId: string): string[] {
    return [...this.open].filter(([, owner]) => owner === orgId).map(([id]) => id);
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

  /** the withdrawals of the work list the book has not read yet (joined since the last pass, or this processor just started) */
  private async readNewcomers(): Promise<void> {
    const { store } = this.options.services;
    for (const id of this.open.keys()) {
      if (this.inFlight.knows(id)) continue;
      const { state } = await loadAggregate(store, streams.withdrawal(id), withdrawalDecider);
      this.inFlight.note(id, state);
    }
  }

  protected async pass(): Promise<PassResult> {
    await this.follow();
    await this.readNewcomers();
    this.payoutBatches?.startPass();
    const { services } = this.options;
    const policy = inFlightPolicyOf(services.chain.family);
    const result = emptyPassResult();
    const busy = new Set<string>();
    for (const [id, orgId] of [...this.open]) {
      if (this.stopController.signal.aborted) break;
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
      result.examined++;
      let progress: ProcessingStep;
      try {
        await this.payoutBatches?.beforeAdvancing(orgId, id, this.openOf(orgId));
        progress = await advanceWithdrawal(services, id, this.inFlight.of(orgId, id));
        this.retries.delete(id);
      } catch (error) {
        result.failed++;
        const attempts = (retry?.attempts ?? 0) + 1;
        const delayMs = this.failureDelayMs(attempts);
        this.retries.set(id, { attempts, notBefore: services.clock().getTime() + delayMs });
        // it may have recorded a transaction before it threw: read again before the next pass signs anything
        this.inFlight.forget(id);
        busy.add(orgId);
        this.logger.warn('withdrawal processor: step failed; retrying later', { withdrawalId: id, error, attempts, delayMs });
        continue;
      }
      if (progress.outcome === 'finished') {
        result.finished++;
        this.open.delete(id);
        this.inFlight.forget(id);
        await this.payoutBatches?.finished(progress.withdrawal, (other) => advanceWithdrawal(services, other));
        continue;
      }
      if (progress.outcome === 'waiting') {
        result.waiting++;
        this.inFlight.note(id, progress.withdrawal);
      } else {
        result.deferred++;
        this.inFlight.forget(id); // put off after its last step: read again before the next pass signs anything
      }
      if (!letsLaterOnesGo(policy, progress)) busy.add(orgId);
    }
    return result;
  }
}
