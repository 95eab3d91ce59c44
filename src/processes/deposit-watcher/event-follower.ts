import { streamCategories } from '../../domain/streams.js';
import type { EventStore, RecordedEvent } from '../../eventstore/port.js';
import type { ChainDefinition } from '../../catalog/chain.js';
import type { DepositDetails } from '../../domain/deposit/deposit.js';
import { LegacyLogDeposits } from './legacy-log-deposits.js';
import { applyDepositEvent, type DepositEventSeen, type UnconfirmedDeposits } from './unconfirmed.js';
import { addAccount, addServiceWallet, emptyWatchSet, type AccountOpened, type WatchSet } from './watch-set.js';

const BATCH = 1000;
const CATEGORIES = [streamCategories.account, streamCategories.deposit, streamCategories.derivationOwner];

/** The addresses of the organization wallets at an index of the chain's key space (settlement, gas). */
export type OrganizationWalletsAt = { space: string; addressesAt(index: number): string[] };

/**
 * What one chain's watcher knows from the event store, not from a read model: the deposit accounts
 * of its chain (account events), its unconfirmed deposits and its EVM token deposits keyed the old
 * way (deposit events), followed from its
 * own position. An address is handed out (its event appended) before anyone can pay to it, and a
 * reader never moves past a position a still-open append can fill (ARCHITECTURE invariant 6), so
 * a refresh made before a block is scanned knows every address that block can pay.
 */
export class ChainEventFollower {
  readonly watchSet: WatchSet;
  readonly unconfirmed: UnconfirmedDeposits = new Map();
  /** EVM token deposits recorded under their log's index in the block (before keys within the transaction) */
  readonly legacyLogDeposits: LegacyLogDeposits;
  private position = 0n;

  constructor(
    private readonly chain: ChainDefinition,
    private readonly store: EventStore,
    private readonly organizationWallets?: OrganizationWalletsAt,
  ) {
    this.watchSet = emptyWatchSet(chain.family);
    this.legacyLogDeposits = new LegacyLogDeposits(chain.id, chain.family);
  }

  /** reads every account and deposit event appended since the last refresh */
  async refresh(): Promise<void> {
    for (;;) {
      const batch = await this.store.readAll({ afterPosition: this.position, maxCount: BATCH, filter: { categories: CATEGORIES } });
      for (const event of batch) this.apply(event);
      if (batch.length > 0) this.position = batch[batch.length - 1]!.position;
      if (batch.length < BATCH) return;
    }
  }

  private apply(event: RecordedEvent): void {
    if (event.type === 'DerivationIndexAssigned') {
      if (this.organizationWallets && event.data.space === this.organizationWallets.space) {
        for (const address of this.organizationWallets.addressesAt(Number(event.data.index))) addServiceWallet(this.watchSet, address);
      }
      return;
    }
    if (event.data.chainId !== this.chain.id) return;
    if (event.type === 'AccountCreated') addAccount(this.watchSet, event.data as unknown as AccountOpened);
    else if (event.type === 'DepositDetected' || event.type === 'DepositConfirmed' || event.type === 'DepositReverted') {
      applyDepositEvent(this.unconfirmed, { type: event.type, data: event.data, revision: event.revision } as DepositEventSeen);
      if (event.type === 'DepositDetected') this.legacyLogDeposits.note(event.data as unknown as DepositDetails);
    }
  }
}
