import { sql, type ColumnType, type Kysely, type Transaction } from 'kysely';
import { loadAggregate } from '../../application/command-handler.js';
import type { ChainDefinition } from '../../catalog/chain.js';
import type { Database } from '../../db/database.js';
import { streamCategories, streams } from '../../domain/streams.js';
import { withdrawalDecider } from '../../domain/withdrawal/decide.js';
import type { WithdrawalEvent } from '../../domain/withdrawal/withdrawal.js';
import type { EventStore, EventWithoutMetadata } from '../../eventstore/port.js';
import { SharedEventsReader, type SharedEventsConsumer } from '../shared-events-reader.js';
import { awaitingApprovalsOf, type AwaitingApprovals } from './awaiting-approvals.js';
import { checkpointPosition, inSlices, saveCheckpoint, type CheckpointTable } from '../worker-checkpoint.js';
import { insertRows, type UnnestColumn } from '../../db/unnest-rows.js';

/** Tables of migration 20261126T0700-withdrawal-processor-checkpoints; bigint columns travel as decimal strings. */
interface ProcessorCheckpointDatabase {
  withdrawal_processor_open: { chain_id: string; withdrawal_id: string; org_id: string; ready_position: ColumnType<string, string, string> };
}

/** a row of withdrawal_processor_open as written (its bigint as a decimal string) */
type OpenRow = { chain_id: string; withdrawal_id: string; org_id: string; ready_position: string };
const OPEN_ROW_COLUMNS: UnnestColumn<OpenRow>[] = [
  ['chain_id', 'text'],
  ['withdrawal_id', 'text'],
  ['org_id', 'text'],
  ['ready_position', 'bigint'],
];

/** the events that make a withdrawal ready to process: requested with one signer, or approved to the threshold */
const READY_TYPES = ['WithdrawalRequested', 'WithdrawalApproved'];
const BATCH = 500;

/** One read of the withdrawal events that make a withdrawal ready, for every withdrawal processor of a process (each keeps its chain's). */
export const readyWithdrawalEvents = (store: EventStore): SharedEventsReader => new SharedEventsReader(store, { categories: [streamCategories.withdrawal], types: READY_TYPES }, BATCH);
/** events read since the last save after which a save is due even when none of them opened a withdrawal */
const POSITION_ONLY_SAVE_EVENTS = 1000;

type OpenWithdrawal = { orgId: string; readyPosition: bigint };

/**
 * The withdrawals of one chain that became Pending and are not known to be finished, in the order
 * they became Pending: what the withdrawal processor works on. Followed from the event store (no
 * read model in between), from the processor's checkpoint: the first follow() loads the saved list
 * and reads only the events after its position; saveCheckpoint() writes what changed since. A
 * withdrawal that became Pending before a checkpoint's position and was not seen finished is in its
 * list; a finished one may leave it (finished is final).
 *
 * The events come from a reader the process's processors share (readyWithdrawalEvents), which hands
 * every batch to every processor's list: a list moves whenever any of them follows, always from one
 * event to the next, and a reader never moves past a position a still-open append can fill.
 */
export class OpenWithdrawals implements SharedEventsConsumer {
  /** events folded in: after a start from a checkpoint, only those after it */
  eventsRead = 0;
  /** the position of the checkpoint it started from (null: none, it read from position 0) */
  startedFrom: bigint | null = null;
  /**
   * withdrawal id → its organization, in the order they became Pending. The list grows with a
   * chain's backlog, so an entry is its two ids only: the organization's is one string shared by
   * all of its entries (orgIds), and the ready position lives in `changes` until it is saved.
   */
  private readonly open = new Map<string, string>();
  /** one copy of each organization id the list holds (organizations are few beside withdrawals) */
  private readonly orgIds = new Map<string, string>();
  private readonly db: Kysely<ProcessorCheckpointDatabase>;
  private readonly checkpoint: CheckpointTable;
  private folded = 0n;
  private loaded = false;
  private loading: Promise<void> | null = null;
  private savedPosition = 0n;
  private eventsSinceSave = 0;
  /** withdrawal id → its entry as it now is (null: finished), since the last save */
  private changes = new Map<string, OpenWithdrawal | null>();
  /** withdrawals that joined with a ready position past this one are marked (null: none is) */
  private markingAfter: bigint | null = null;
  /** the withdrawals that joined marked, until their mark is taken or dropped */
  private readonly marked = new Set<string>();
  /** withdrawals seen requested awaiting approval, on any chain, shared with the reader's other processors (./awaiting-approvals.ts) */
  private readonly awaitingApproval: AwaitingApprovals;

  constructor(
    private readonly services: { store: EventStore; chain: ChainDefinition; db: Kysely<Database> },
    private readonly events: SharedEventsReader = readyWithdrawalEvents(services.store),
  ) {
    this.db = services.db as unknown as Kysely<ProcessorCheckpointDatabase>;
    this.checkpoint = { table: 'withdrawal_processor_checkpoints', chainId: services.chain.id };
    this.awaitingApproval = awaitingApprovalsOf(events);
  }

  /** withdrawal id → organization, in the order they became Pending */
  list(): [string, string][] {
    return [...this.open];
  }

  /** the withdrawal ids, in the order they became Pending (a copy: the list may move while a pass walks it) */
  ids(): string[] {
    return [...this.open.keys()];
  }

  /** the organization of an open withdrawal (undefined: not in the list, or finished since) */
  orgOf(id: string): string | undefined {
    return this.open.get(id);
  }

  get size(): number {
    return this.open.size;
  }

  /** the withdrawal is finished (completed, failed, cancelled): it leaves the list */
  finish(id: string): void {
    this.marked.delete(id);
    if (this.open.delete(id)) this.changes.set(id, null);
  }

  /**
   * From now on, a withdrawal that joins the list by a ready event past `position` is marked, until
   * its mark is taken (takeMark) or dropped (dropMarks); null: none is, and every mark is dropped.
   * The processor marks what became ready after it took the chain's lock (./worker.ts).
   */
  markJoinersAfter(position: bigint | null): void {
    this.markingAfter = position;
    if (position === null) this.marked.clear();
  }

  /** whether the withdrawal joined marked; its mark is gone either way */
  takeMark(id: string): boolean {
    return this.marked.delete(id);
  }

  dropMarks(ids: readonly string[]): void {
    for (const id of ids) this.marked.delete(id);
  }

  /** the position the list is folded up to */
  get position(): bigint {
    return this.folded;
  }

  /**
   * takes every ready withdrawal event appended before the call (the first: loads the checkpoint
   * first): the ones that became Pending on this chain join the list; a stop request ends the wait
   * at once (it throws the signal's reason), the list standing at the last event taken
   */
  async follow(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (!this.loaded) await (this.loading ??= this.load().finally(() => (this.loading = null)));
    await this.events.readToHead(this, signal);
  }

  /** a batch the shared reader read: the events after this list's position folded in, one after the other */
  async take(batch: readonly EventWithoutMetadata[]): Promise<void> {
    const { store, chain } = this.services;
    for (const recorded of batch) {
      if (recorded.position <= this.folded) continue;
      const event = { type: recorded.type, data: recorded.data } as WithdrawalEvent;
      if (event.type === 'WithdrawalRequested' && event.data.status === 'Pending' && event.data.chainId === chain.id) this.add(event.data.id, event.data.orgId, recorded.position);
      if (event.type === 'WithdrawalRequested' && event.data.status === 'PendingApproval') this.awaitingApproval.remember(event.data.id, event.data.chainId, event.data.orgId);
      if (event.type === 'WithdrawalApproved' && event.data.status === 'Pending') {
        const remembered = this.awaitingApproval.approved(event.data.id);
        if (remembered) {
          if (remembered.chainId === chain.id) this.add(event.data.id, remembered.orgId, recorded.position);
        } else {
          // an approval names neither chain nor organization: the stream does
          const { state } = await loadAggregate(store, streams.withdrawal(event.data.id), withdrawalDecider);
          if (state.status !== 'None' && state.chainId === chain.id) this.add(state.id, state.orgId, recorded.position);
        }
      }
      // the position moves with the event, together with what it changed (a save may come between two events)
      this.folded = recorded.position;
      this.eventsRead++;
      this.eventsSinceSave++;
    }
    const last = batch[batch.length - 1]?.position;
    if (last !== undefined && last > this.folded) this.folded = last;
  }

  /**
   * Saves the list at the position followed to, when it changed since the last save (or enough
   * events went by): the active processor calls it, holding the chain's lock.
   */
  async saveCheckpoint(now: Date): Promise<void> {
    if (!this.loaded || (this.changes.size === 0 && (this.folded === this.savedPosition || this.eventsSinceSave < POSITION_ONLY_SAVE_EVENTS))) return;
    // the position and its changes taken together: the shared reader may fold more in during the save
    const position = this.folded;
    const changes = this.changes;
    const eventsSaved = this.eventsSinceSave;
    this.changes = new Map();
    this.eventsSinceSave = 0;
    try {
      // saved, or another processor saved at or past this position: either way the table holds all of it
      await saveCheckpoint(this.db as unknown as Kysely<unknown>, this.checkpoint, position, now, (trx) => this.write(trx as unknown as Transaction<ProcessorCheckpointDatabase>, [...changes]));
    } catch (error) {
      // not saved: the next save writes these changes too, under those folded in since
      for (const [id, entry] of this.changes) changes.set(id, entry);
      this.changes = changes;
      this.eventsSinceSave += eventsSaved;
      throw error;
    }
    this.savedPosition = position;
  }

  private add(id: string, orgId: string, readyPosition: bigint): void {
    if (this.open.has(id)) return;
    const shared = this.sharedOrgId(orgId);
    this.open.set(id, shared);
    this.changes.set(id, { orgId: shared, readyPosition });
    if (this.markingAfter !== null && readyPosition > this.markingAfter) this.marked.add(id);
  }

  private sharedOrgId(orgId: string): string {
    const known = this.orgIds.get(orgId);
    if (known !== undefined) return known;
    this.orgIds.set(orgId, orgId);
    return orgId;
  }

  private async load(): Promise<void> {
    const chainId = this.services.chain.id;
    const saved = await this.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const position = await checkpointPosition(trx as unknown as Kysely<unknown>, this.checkpoint);
        if (position === null) return null;
        const rows = await trx.selectFrom('withdrawal_processor_open').selectAll().where('chain_id', '=', chainId).orderBy('ready_position').orderBy('withdrawal_id').execute();
        return { position, rows };
      });
    if (saved) {
      for (const row of saved.rows) this.open.set(row.withdrawal_id, this.sharedOrgId(row.org_id));
      this.folded = saved.position;
      this.savedPosition = saved.position;
      this.startedFrom = saved.position;
    }
    this.loaded = true;
    this.events.join(this);
  }

  private async write(trx: Transaction<ProcessorCheckpointDatabase>, changes: [string, OpenWithdrawal | null][]): Promise<void> {
    const chain_id = this.services.chain.id;
    const opened = changes.flatMap(([id, entry]): OpenRow[] => (entry ? [{ chain_id, withdrawal_id: id, org_id: entry.orgId, ready_position: entry.readyPosition.toString() }] : []));
    // one array parameter per column: one statement text, whatever the number of rows (a VALUES list takes a parameter per cell)
    for (const rows of inSlices(opened)) {
      await sql`${insertRows<OpenRow, ProcessorCheckpointDatabase>('withdrawal_processor_open', rows, OPEN_ROW_COLUMNS)}
        on conflict (chain_id, withdrawal_id) do update set org_id = excluded.org_id, ready_position = excluded.ready_position`.execute(trx);
    }
    const finished = changes.flatMap(([id, entry]) => (entry ? [] : [id]));
    for (const ids of inSlices(finished)) await sql`delete from withdrawal_processor_open where chain_id = ${chain_id} and withdrawal_id = any(${ids}::text[])`.execute(trx);
  }
}
