import type { EventWithoutMetadata } from '../../eventstore/port.js';
import type { ChainDefinition } from '../../catalog/chain.js';
import { depositKey, type DepositDetails } from '../../domain/deposit/deposit.js';
import { FollowerChanges, type FollowerSnapshot, type WatcherCheckpoints } from './checkpoint.js';
import type { FollowedEventsConsumer, FollowedEventsReader } from './followed-events.js';
import { LegacyLogDeposits } from './legacy-log-deposits.js';
import { applyDepositEvent, type DepositEventSeen, type UnconfirmedDeposits } from './unconfirmed.js';
import { accountEntryKey, addAccount, addressKey, addServiceWallet, emptyWatchSet, type AccountOpened, type WatchSet } from './watch-set.js';

/** events read since the last save after which a save is due even when none of them changed the state (the position alone moves) */
const POSITION_ONLY_SAVE_EVENTS = 1000;

/** The addresses of the organization wallets at an index of the chain's key space (settlement, gas). */
export type OrganizationWalletsAt = { space: string; addressesAt(index: number): string[] };

/**
 * What one chain's watcher knows from the event store, not from a read model: the deposit accounts
 * of its chain (account events), its unconfirmed deposits and its EVM token deposits keyed the old
 * way (deposit events), followed from its
 * own position. The events come from a reader the process's watchers share (FollowedEventsReader),
 * which hands every batch to every follower: the state moves whenever any of them refreshes, always
 * from one event to the next. An address is handed out (its event appended) before anyone can pay
 * to it, and a reader never moves past a position a still-open append can fill (ARCHITECTURE
 * invariant 6), so a refresh made before a block is scanned knows every address that block can pay.
 *
 * With a checkpoint store, its first refresh starts from the saved state and reads only the events
 * after its position; saveCheckpoint() writes what changed since. The state is a fold of the events
 * up to the position and nothing else, so a save can come before or after any work on the chain.
 */
export class ChainEventFollower implements FollowedEventsConsumer {
  readonly watchSet: WatchSet;
  readonly unconfirmed: UnconfirmedDeposits = new Map();
  /** EVM token deposits recorded under their log's index in the block (before keys within the transaction) */
  readonly legacyLogDeposits: LegacyLogDeposits;
  /** events folded in by this follower: after a start from a checkpoint, only those after it */
  eventsRead = 0;
  /** the position of the checkpoint it started from (null: none, it read from position 0) */
  startedFrom: bigint | null = null;
  private folded = 0n;
  private loading: Promise<void> | null = null;
  private loaded = false;
  private savedPosition = 0n;
  private eventsSinceSave = 0;
  private changes = new FollowerChanges();

  constructor(
    private readonly chain: ChainDefinition,
    private readonly events: FollowedEventsReader,
    private readonly organizationWallets?: OrganizationWalletsAt,
    private readonly checkpoints?: WatcherCheckpoints,
  ) {
    this.watchSet = emptyWatchSet(chain.family);
    this.legacyLogDeposits = new LegacyLogDeposits(chain.id, chain.family);
  }

  /** the position the state is folded up to */
  get position(): bigint {
    return this.folded;
  }

  /**
   * takes every account and deposit event appended before the call (the first: loads the checkpoint
   * first); a stop request ends the wait at once (it throws the signal's reason), the state standing
   * at the last batch taken
   */
  async refresh(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (!this.loaded) await (this.loading ??= this.load().finally(() => (this.loading = null)));
    await this.events.readToHead(this, signal);
  }

  /** a batch the shared reader read: the events after this follower's position folded in */
  take(batch: readonly EventWithoutMetadata[]): void {
    let taken = 0;
    for (const event of batch) {
      if (event.position <= this.folded) continue;
      this.apply(event);
      taken++;
    }
    this.eventsRead += taken;
    this.eventsSinceSave += taken;
    const last = batch[batch.length - 1]?.position;
    if (last !== undefined && last > this.folded) this.folded = last;
  }

  /**
   * Saves the state at the position reached, when it changed since the last save (or enough events
   * went by): the active watcher calls it, holding the chain's lock.
   */
  async saveCheckpoint(now: Date): Promise<void> {
    if (!this.checkpoints || !this.loaded || this.folded === this.savedPosition) return;
    if (this.changes.empty && this.eventsSinceSave < POSITION_ONLY_SAVE_EVENTS) return;
    // the position and its changes taken together: the shared reader may fold more in during the save
    const position = this.folded;
    const changes = this.changes;
    const eventsSaved = this.eventsSinceSave;
    this.changes = new FollowerChanges();
    this.eventsSinceSave = 0;
    try {
      // saved, or another watcher saved at or past this position: either way the table holds all of it
      await this.checkpoints.save(position, changes, now);
    } catch (error) {
      // not saved: the next save writes these changes too, under those folded in since
      this.changes = changes.followedBy(this.changes);
      this.eventsSinceSave += eventsSaved;
      throw error;
    }
    this.savedPosition = position;
  }

  private async load(): Promise<void> {
    const snapshot = this.checkpoints ? await this.checkpoints.load() : null;
    if (snapshot) this.restore(snapshot);
    this.loaded = true;
    this.events.join(this);
  }

  private restore(snapshot: FollowerSnapshot): void {
    for (const entry of snapshot.watched) {
      if (entry.kind === 'account') addAccount(this.watchSet, entry.account);
      else addServiceWallet(this.watchSet, entry.entryKey);
    }
    for (const deposit of snapshot.unconfirmed) this.unconfirmed.set(depositKey(deposit.ref), deposit);
    this.legacyLogDeposits.restore(snapshot.legacyLogDeposits);
    this.folded = snapshot.position;
    this.savedPosition = snapshot.position;
    this.startedFrom = snapshot.position;
  }

  private apply(event: EventWithoutMetadata): void {
    if (event.type === 'DerivationIndexAssigned') {
      if (this.organizationWallets && event.data.space === this.organizationWallets.space) {
        for (const address of this.organizationWallets.addressesAt(Number(event.data.index))) {
          addServiceWallet(this.watchSet, address);
          this.changes.watch({ kind: 'service', entryKey: addressKey(this.chain.family, address) });
        }
      }
      return;
    }
    if (event.data.chainId !== this.chain.id) return;
    if (event.type === 'AccountCreated') {
      const account = event.data as unknown as AccountOpened;
      addAccount(this.watchSet, account);
      this.changes.watch({ kind: 'account', entryKey: accountEntryKey(this.chain.family, account), account });
    } else if (event.type === 'DepositDetected' || event.type === 'DepositConfirmed' || event.type === 'DepositReverted') {
      const seen = { type: event.type, data: event.data, revision: event.revision } as DepositEventSeen;
      applyDepositEvent(this.unconfirmed, seen);
      const ref = { chainId: seen.data.chainId, txHash: seen.data.txHash, index: seen.data.index };
      this.changes.deposit(ref, this.unconfirmed.get(depositKey(ref)) ?? null);
      if (event.type === 'DepositDetected') {
        const noted = this.legacyLogDeposits.note(event.data as unknown as DepositDetails);
        if (noted) this.changes.legacyLogDeposits.push(noted);
      }
    }
  }
}
