import type { Kysely } from 'kysely';
import { canonicalTxHash, confirmDeposits, recordDeposits, revertDeposit, type DepositServices, type ObservedTransfer, type TransferToRecord } from '../../application/deposits.js';
import type { CommandMetadata } from '../../application/command-handler.js';
import type { Database } from '../../db/database.js';
import { depositKey } from '../../domain/deposit/deposit.js';
import { DomainError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { BlockHeader, BlockTransfer, ChainGateway } from '../../chains/gateway.js';
import { BlockLog, CursorMovedError, UNSAVED_MOVES_MS } from './block-log.js';
import { WatcherCheckpoints } from './checkpoint.js';
import { ChainEventFollower, type OrganizationWalletsAt } from './event-follower.js';
import { FollowedEventsReader } from './followed-events.js';
import { findForkPoint } from './fork-point.js';
import type { HeadNotifications } from './head-notifications.js';
import type { TransferKey } from './legacy-log-deposits.js';
import type { WatcherLockSession } from './lock-session.js';
import { abandonedAbove, confirmationsAt, dueForConfirmation, supersededAt, type UnconfirmedDeposit } from './unconfirmed.js';
import { attribute, watchedAddresses } from './watch-set.js';
import type { ChainDefinition } from '../../catalog/chain.js';
import { backoffDelayMs, pauseUnlessStopped } from '../../lib/pause.js';
import { logChainLag } from '../../chains/rpc/lag.js';
import { recordChainHeights, recordWorkerFirstPass } from '../../observability/metrics.js';

export type WatcherState = 'idle' | 'standby' | 'active' | 'failing' | 'stopped';

export interface ChainWatcherOptions {
  gateway: ChainGateway;
  services: DepositServices;
  db: Kysely<Database>;
  locks: WatcherLockSession;
  logger: Logger;
  /** how long an idle watcher waits before looking at the chain again */
  pollIntervalMs: number;
  /** the organizations' own wallets on the chain, whose transfers (gas top-ups) are never deposits */
  organizationWalletsAt?: (chain: ChainDefinition) => OrganizationWalletsAt;
  /** notifications of the chain's new heads: while they arrive, the watcher waits for them instead of polling */
  headNotifications?: HeadNotifications;
  /** the reader of the followed events the process's watchers share (default: one of its own) */
  events?: FollowedEventsReader;
  /** how often a standby watcher tries to become the active one */
  standbyRetryMs?: number;
  /** blocks scanned in one step before the watcher looks at stop requests and confirmations again */
  blocksPerStep?: number;
  /** the first block of a chain never scanned (the devnet's genesis: 0) */
  startBlock?: number;
  /** delay before retrying after the n-th consecutive failure */
  failureDelayMs?: (attempt: number) => number;
}

const defaultFailureDelayMs = (attempt: number) => backoffDelayMs(attempt, 250, 30_000);
const LAG_REPORT_INTERVAL_MS = 60_000;
const LAG_WARNING_BLOCKS = 100;
/** the longest a watcher goes without a full pass while the chain's head stays put: a safety net, never needed for correctness */
const FULL_PASS_EVERY_MS = 5_000;
/** the longest a watcher woken by head notifications waits without one: a lost notification only delays this long */
const NOTIFIED_SAFETY_POLL_MS = 1_000;


/** How a block scan ended: scanned (`recorded` when it recorded deposits), or the block changed under the scan (a reorg the next step handles). */
type ScanOutcome = 'scanned' | 'recorded' | 'changed';

/**
 * Follows one chain (over its ChainGateway) and turns transfers to deposit addresses into deposits:
 * detected when their block is scanned, confirmed once deep enough, reverted when a reorg abandons
 * their block first. Its cursor and the hashes of recent blocks live in PostgreSQL (BlockLog);
 * what it knows about accounts and deposits comes from the event store (ChainEventFollower). Every
 * write it makes is idempotent, so a step cut short by a crash is simply done again.
 */
export class ChainWatcher {
  state: WatcherState = 'idle';
  private readonly chainId: string;
  private readonly blockLog: BlockLog;
  private readonly follower: ChainEventFollower;
  private readonly logger: Logger;
  private readonly metadata: CommandMetadata;
  private readonly stopController = new AbortController();
  private running: Promise<void> | null = null;
  /**
   * The head a complete pass left this watcher settled at (every block to it scanned, every deposit
   * deep enough at it confirmed) and when: while the head stays the same block, a pass would only
   * read what it read last time, so it stops after reading the head. A block's hash covers its
   * parent's, so the same head means the same chain below it (no reorg).
   */
  private settled: { head: BlockHeader; atMs: number } | null = null;

  constructor(private readonly options: ChainWatcherOptions) {
    this.chainId = options.gateway.chain.id;
    this.blockLog = new BlockLog(options.db, this.chainId);
    this.follower = new ChainEventFollower(
      options.gateway.chain,
      options.events ?? new FollowedEventsReader(options.services.store),
      options.organizationWalletsAt?.(options.gateway.chain),
      new WatcherCheckpoints(options.db, this.chainId),
    );
    this.logger = options.logger.child({ watcher: this.chainId });
    this.metadata = { actor: `watcher:${this.chainId}` };
  }

  start(): void {
    this.running ??= this.loop();
  }

  /** finishes the block in flight, then releases the chain's lock */
  async stop(): Promise<void> {
    this.stopController.abort();
    await this.running;
    await this.saveCursor();
    await this.options.locks.release(this.chainId);
    this.state = 'stopped';
  }

  /**
   * Scans up to the head as it is now and confirms what is deep enough, if this watcher can take
   * the chain's lock (tests and tools); false when another watcher is active.
   */
  async catchUp(): Promise<boolean> {
    if (!(await this.options.locks.acquire(this.chainId))) return false;
    this.blockLog.forget();
    try {
      for (;;) {
        try {
          if (await this.step()) continue;
          // caught up: the table's cursor is where this watcher stands
          await this.blockLog.save(this.options.services.clock());
          break;
        } catch (error) {
          // another watcher moved the cursor first: read it again and go on from there
          this.blockLog.forget();
          if (!(error instanceof CursorMovedError)) throw error;
        }
      }
    } finally {
      if (!this.running) await this.options.locks.release(this.chainId);
    }
    return true;
  }

  /** the moves past blocks that paid nobody, held in memory, written while this watcher still holds the chain; a failure only means those blocks are scanned again */
  private async saveCursor(): Promise<void> {
    if (!this.options.locks.holds(this.chainId)) return this.blockLog.forget();
    try {
      await this.blockLog.save(this.options.services.clock());
    } catch (error) {
      this.blockLog.forget();
      this.logger.warn('chain watcher: cursor not saved at stop; the blocks after it are scanned again', { error });
    }
  }

  private get stopping(): boolean {
    return this.stopController.signal.aborted;
  }

  private async loop(): Promise<void> {
    const { locks, pollIntervalMs, standbyRetryMs = 2000, failureDelayMs = defaultFailureDelayMs } = this.options;
    const signal = this.stopController.signal;
    let failures = 0;
    while (!signal.aborted) {
      try {
        if (!(await locks.acquire(this.chainId))) {
          this.state = 'standby';
          await pauseUnlessStopped(standbyRetryMs, signal);
          continue;
        }
        if (this.state !== 'active') {
          this.logger.info('chain watcher: active');
          // another watcher may have worked the chain meanwhile: the first pass is a full one, from the table's cursor
          this.settled = null;
          this.blockLog.forget();
        }
        this.state = 'active';
        // a head announced from here on is looked at by the next pass
        this.options.headNotifications?.reset(this.chainId);
        const behind = await this.step();
        this.logStarted();
        failures = 0;
        if (!behind) await this.waitForNextBlock();
      } catch (error) {
        this.blockLog.forget();
        if (error instanceof CursorMovedError) {
          // another watcher moved the cursor (both believed they were active): read it again
          this.logger.warn('chain watcher: cursor moved by another watcher', { error });
          await pauseUnlessStopped(pollIntervalMs, signal);
          continue;
        }
        // a stop request ended the step (a long first read of the history): nothing failed
        if (signal.aborted) break;
        failures++;
        this.state = 'failing';
        this.logger.error('chain watcher: step failed; retrying', { error, failures });
        await pauseUnlessStopped(failureDelayMs(failures), signal);
      }
    }
  }

  /**
   * until the chain's head moves (announced, or polled for when nothing announces it), or a stop;
   * with the cursor's moves held in memory, at most until a second after they are due to be
   * written: the next block's scan writes them on a chain still mining, the next pass on one gone
   * quiet
   */
  private waitForNextBlock(): Promise<void> {
    const { headNotifications, pollIntervalMs } = this.options;
    const signal = this.stopController.signal;
    const saveDue = this.blockLog.msUntilSaveDue;
    const atMost = (ms: number) => (saveDue === null ? ms : Math.min(ms, saveDue + UNSAVED_MOVES_MS));
    if (!headNotifications?.announces(this.chainId)) return pauseUnlessStopped(atMost(pollIntervalMs), signal);
    return headNotifications.waitForHead(this.chainId, { safetyMs: atMost(Math.max(pollIntervalMs, NOTIFIED_SAFETY_POLL_MS)), pollMs: atMost(pollIntervalMs) }, signal);
  }

  /**
   * One pass, then what the pass read from the event store saved at its position (the checkpoint a
   * start reads from). A pass that throws saves nothing; the next one does.
   */
  private async step(): Promise<boolean> {
    const behind = await this.pass();
    // only the chain's active watcher writes its checkpoint
    if (this.options.locks.holds(this.chainId)) await this.follower.saveCheckpoint(this.options.services.clock());
    return behind;
  }

  /** reorg check, blocks from the cursor towards the head, confirmations; true when more blocks wait */
  private async pass(): Promise<boolean> {
    const { gateway, services, startBlock = 0, blocksPerStep = 100 } = this.options;
    // moves held in memory while no block came since (a chain gone quiet) are written now
    await this.blockLog.saveIfDue(services.clock());
    const head = await gateway.head();
    if (this.settledAt(head)) return false;
    this.settled = null;
    await this.follower.refresh(this.stopController.signal);
    let cursor = await this.blockLog.cursor(startBlock, services.clock());
    let previousHash: string | null = null;
    // the block after the last one scanned, read once: the reorg check below and the scan both use it
    const next = cursor <= head.number ? await gateway.block(cursor) : null;
    if (cursor > startBlock) {
      previousHash = await this.blockLog.hashOf(cursor - 1);
      if (previousHash !== null && !(await this.stillCanonical(cursor - 1, previousHash, head, next))) {
        await this.reorganize(cursor);
        return true;
      }
    }
    // deposits already scanned that this head makes deep enough: confirmed now, not after the blocks below the head are scanned
    const confirmed = await this.confirmDue(head.number, cursor);
    const last = Math.min(head.number, cursor + blocksPerStep - 1);
    const { headers, complete } = await this.linkedHeaders(cursor, last, previousHash, next);
    // blocks that lead to the head read before the pass's refresh were all mined before it: they pay no address it did not see
    const tip = headers[headers.length - 1];
    const seenByRefresh = complete && tip !== undefined && tip.number === head.number && tip.hash === head.hash;
    let recorded = false;
    for (const header of headers) {
      if (this.stopping || !this.options.locks.holds(this.chainId)) return false;
      const outcome = await this.scanBlock(header, head.number, seenByRefresh);
      if (outcome === 'changed') return true;
      recorded ||= outcome === 'recorded';
      cursor = header.number + 1;
    }
    // the chain got shorter or a block no longer follows the one scanned: a reorg, seen next step
    if (!complete) return true;
    // and those of the blocks this pass scanned (a chain of one confirmation), with what they recorded read, and what
    // was confirmed above (a confirmation decided on a detection since confirmed is refused, then decided again alone on a read)
    if (recorded || confirmed) await this.follower.refresh(this.stopController.signal);
    await this.confirmDue(head.number, cursor);
    this.reportLag(cursor - 1, head.number);
    // cut short by a stop or a lost lock: not settled, the next pass is a full one
    if (last >= head.number && !this.stopping && this.options.locks.holds(this.chainId)) this.settled = { head, atMs: Date.now() };
    return last < head.number;
  }

  /**
   * The headers from `from` to `to`, each following the one before it (the first, the block hashed
   * `previousHash`); `complete` is false when the chain got shorter or a block no longer follows,
   * and `headers` then holds those before it.
   */
  private async linkedHeaders(from: number, to: number, previousHash: string | null, first: BlockHeader | null): Promise<{ headers: BlockHeader[]; complete: boolean }> {
    const headers: BlockHeader[] = [];
    let parentHash = previousHash;
    for (let number = from; number <= to; number++) {
      if (this.stopping) break;
      const header = number === from && first !== null ? first : await this.options.gateway.block(number);
      if (!header || (parentHash !== null && header.parentHash !== parentHash)) return { headers, complete: false };
      headers.push(header);
      parentHash = header.hash;
    }
    return { headers, complete: true };
  }

  /**
   * the block scanned last (`number`, hashed `hash`) is still the chain's: the block after it (read
   * for the scan anyway) names it as its parent, or the head is that very block; otherwise, or with
   * neither at hand, the block at that height is read (a block's hash covers its parent's, so a
   * block that names it as parent, read from the chain, proves it canonical when read)
   */
  private async stillCanonical(number: number, hash: string, head: BlockHeader, next: BlockHeader | null): Promise<boolean> {
    if (next !== null && next.number === number + 1 && next.parentHash === hash) return true;
    if (head.number === number) return head.hash === hash;
    return ((await this.options.gateway.block(number))?.hash ?? null) === hash;
  }

  /** the last complete pass ended at this very head, not long ago: nothing changed that a pass would see */
  private settledAt(head: BlockHeader): boolean {
    const settled = this.settled;
    if (!settled || settled.head.number !== head.number || settled.head.hash !== head.hash) return false;
    return Date.now() - settled.atMs < FULL_PASS_EVERY_MS;
  }

  private startedLogged = false;
  private readonly createdAtMs = Date.now();

  /** once, after its first pass: where its state came from and what that cost (operators watch start-up time) */
  private logStarted(): void {
    if (this.startedLogged) return;
    this.startedLogged = true;
    const { startedFrom, eventsRead } = this.follower;
    const ms = Date.now() - this.createdAtMs;
    recordWorkerFirstPass('deposit-watcher', this.chainId, ms, eventsRead);
    this.logger.info('chain watcher: started', { checkpoint: startedFrom === null ? null : startedFrom.toString(), eventsRead, ms });
  }

  private lagReportedAtMs = 0;

  /** the lag behind the head, for operators: once a minute, and at every step while it is large */
  private reportLag(scannedHeight: number, headHeight: number): void {
    recordChainHeights(this.chainId, scannedHeight, headHeight);
    const nowMs = Date.now();
    if (nowMs - this.lagReportedAtMs < LAG_REPORT_INTERVAL_MS && headHeight - scannedHeight <= LAG_WARNING_BLOCKS) return;
    this.lagReportedAtMs = nowMs;
    logChainLag(this.logger, this.chainId, scannedHeight, headHeight, LAG_WARNING_BLOCKS);
  }

  /**
   * `head`: the head the pass read (a block already deep enough at it is recorded confirmed);
   * `seenByRefresh`: the block was mined before the pass's refresh began, which saw every address it can pay
   */
  private async scanBlock(header: BlockHeader, head: number, seenByRefresh: boolean): Promise<ScanOutcome> {
    const { gateway, services } = this.options;
    // addresses handed out until now: every address this block can pay is among them
    if (!seenByRefresh) await this.follower.refresh(this.stopController.signal);
    // deposits recorded at this height in another block (a crash before the cursor moved, then a reorg)
    for (const deposit of supersededAt(this.follower.unconfirmed, header.number, header.hash)) await this.revert(deposit);
    const transfers = await gateway.transfersInBlock(header.number, watchedAddresses(this.follower.watchSet));
    if (transfers.some((transfer) => transfer.blockHash !== header.hash)) return 'changed';
    const keys = this.follower.legacyLogDeposits.keyAll(transfers);
    const recorded = await this.record(transfers, keys, head);
    // a block that recorded nothing is scanned again harmlessly: its move may wait in memory (written with the next or within a second)
    const scanned = { number: header.number, hash: header.hash };
    await (recorded ? this.blockLog.scanned(scanned, services.clock()) : this.blockLog.scannedUnsaved(scanned, services.clock()));
    return recorded ? 'recorded' : 'scanned';
  }

  /** a block's transfers recorded together; true when it recorded a deposit (not a duplicate, not ignored); each confirmed with it when deep enough at `head` */
  private async record(transfers: BlockTransfer[], keys: TransferKey[], head: number): Promise<boolean> {
    const toRecord: TransferToRecord[] = [];
    transfers.forEach((transfer, position) => {
      const seen = this.toRecord(transfer, keys[position]!, head);
      if (seen) toRecord.push(seen);
    });
    if (toRecord.length === 0) return false;
    const outcomes = await recordDeposits(this.options.services, toRecord, this.metadata);
    toRecord.forEach(({ transfer, owner }, position) =>
      this.logger.info('chain watcher: deposit seen', {
        txHash: transfer.txHash,
        index: transfer.index,
        blockNumber: transfer.blockNumber,
        outcome: outcomes[position],
        attributed: owner !== null,
      }),
    );
    return outcomes.includes('recorded');
  }

  /** the transfer as the deposit to record, or null when it is not one of ours or its key is refused */
  private toRecord(transfer: BlockTransfer, key: TransferKey, head: number): TransferToRecord | null {
    const owner = attribute(this.follower.watchSet, transfer);
    if (owner === undefined) return null; // not one of ours (a gateway may answer more than it was asked)
    if ('refused' in key) {
      this.logger.error('chain watcher: transfer not recorded; an operator decides', { txHash: transfer.txHash, index: transfer.index, reason: key.refused });
      return null;
    }
    const observed: ObservedTransfer = {
      chainId: this.chainId,
      txHash: transfer.txHash,
      index: key.index,
      ...(key.logIndexInTransaction ? { logIndexInTransaction: true as const } : {}),
      blockNumber: transfer.blockNumber,
      blockHash: transfer.blockHash,
      from: transfer.from,
      to: transfer.to,
      asset: transfer.asset,
      amount: transfer.amount,
      destinationTag: transfer.destinationTag,
    };
    // a transfer the follower has not seen recorded is decided as new without reading its stream first
    const unseen = !this.follower.unconfirmed.has(depositKey({ ...observed, txHash: canonicalTxHash(observed.chainId, observed.txHash) }));
    const confirmations = confirmationsAt(head, transfer.blockNumber);
    const deepEnough = confirmations >= this.options.gateway.chain.properties.confirmations;
    return { transfer: observed, owner, ...(unseen ? { known: 'unseen' as const } : {}), ...(deepEnough ? { confirmations } : {}) };
  }

  /** a reorg replaced the last scanned block: walk back to the fork point, revert what was abandoned, scan again from there */
  private async reorganize(cursor: number): Promise<void> {
    const { gateway, services, startBlock = 0 } = this.options;
    const remembered = await this.blockLog.recentBlocks(services.clock());
    const fork = await findForkPoint(remembered, async (number) => (await gateway.block(number))?.hash ?? null);
    const oldest = remembered[remembered.length - 1]?.number ?? startBlock;
    // deeper than remembered: everything remembered is scanned again, which is the most that can be done
    const forkPoint = fork ?? oldest - 1;
    if (fork === null) this.logger.error('chain watcher: reorg deeper than the remembered blocks', { oldestRemembered: oldest });
    await this.follower.refresh(this.stopController.signal);
    const abandoned = abandonedAbove(this.follower.unconfirmed, forkPoint);
    // reverts first, the cursor after: a crash in between finds the same reorg again
    for (const deposit of abandoned) await this.revert(deposit);
    await this.blockLog.rewind(cursor, forkPoint + 1, services.clock());
    this.logger.warn('chain watcher: reorg', { forkPoint, abandonedBlocks: cursor - 1 - forkPoint, revertedDeposits: abandoned.length });
  }

  private async revert(deposit: UnconfirmedDeposit): Promise<void> {
    try {
      await revertDeposit(this.options.services, deposit.ref, 'reorg', this.metadata);
      this.logger.info('chain watcher: deposit reverted (reorg)', { deposit: depositKey(deposit.ref), blockNumber: deposit.blockNumber });
    } catch (error) {
      // confirmed in the meantime (a reorg deeper than the confirmation depth): it stays credited; an operator decides
      if (error instanceof DomainError && error.code === 'DEPOSIT_ALREADY_CONFIRMED') {
        this.logger.error('chain watcher: a reorg abandoned the block of a confirmed deposit', { deposit: depositKey(deposit.ref) });
        return;
      }
      throw error;
    }
  }

  /** deposits in scanned blocks (below `cursor`) with enough confirmations whose block is still the one recorded, as the follower last read them; true when there were some */
  private async confirmDue(head: number, cursor: number): Promise<boolean> {
    const { gateway, services } = this.options;
    const canonicalHashes = new Map<number, string | null>();
    const due = dueForConfirmation(this.follower.unconfirmed, head, gateway.chain.properties.confirmations);
    const ready = due.filter((candidate) => candidate.blockNumber < cursor);
    for (const number of new Set(ready.map((deposit) => deposit.blockNumber))) {
      if (this.stopping) return false;
      canonicalHashes.set(number, (await gateway.block(number))?.hash ?? null);
    }
    // its block was replaced: the next step's reorg check reverts it
    const canonical = ready.filter((deposit) => canonicalHashes.get(deposit.blockNumber) === deposit.blockHash);
    if (canonical.length === 0 || this.stopping) return false;
    const deposits = canonical.map((deposit) => ({ ref: deposit.ref, confirmations: confirmationsAt(head, deposit.blockNumber), ...(deposit.detection ? { known: deposit.detection } : {}) }));
    const refusals = await confirmDeposits(services, deposits, this.metadata);
    // reverted first by another watcher: nothing to confirm; any other refusal fails the step
    const refusal = refusals.find((error) => error !== null && error.code !== 'DEPOSIT_REVERTED');
    if (refusal) throw refusal;
    return true;
  }
}
