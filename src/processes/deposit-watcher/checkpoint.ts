import type { ColumnType, Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/database.js';
import { depositKey, type DepositRef } from '../../domain/deposit/deposit.js';
import { checkpointPosition, inSlices, saveCheckpoint, type CheckpointTable } from '../worker-checkpoint.js';
import type { LegacyLogDeposit } from './legacy-log-deposits.js';
import type { UnconfirmedDeposit } from './unconfirmed.js';
import type { AccountOpened } from './watch-set.js';

/** Tables of migration 20261126T0700-watcher-checkpoints; bigint columns travel as decimal strings. */
interface WatcherCheckpointDatabase {
  chain_watcher_addresses: {
    chain_id: string;
    entry_key: string;
    kind: 'account' | 'service';
    address: string;
    destination_tag: string | null;
    org_id: string | null;
    external_user_id: string | null;
  };
  chain_watcher_unconfirmed: { chain_id: string; tx_hash: string; output_index: number; block_number: ColumnType<string, number, number>; block_hash: string };
  chain_watcher_legacy_deposits: { chain_id: string; tx_hash: string; log_index: number; content: string };
}

/** An entry of the watch set: a deposit account, or one of the organizations' own wallets (its address key). */
export type WatchedEntry = { kind: 'account'; entryKey: string; account: AccountOpened } | { kind: 'service'; entryKey: string };

/** What a watcher knows from the event store up to `position`, as its checkpoint keeps it. */
export interface FollowerSnapshot {
  position: bigint;
  watched: WatchedEntry[];
  unconfirmed: UnconfirmedDeposit[];
  legacyLogDeposits: LegacyLogDeposit[];
}

/**
 * What changed in a follower's state since its last save: each entry's last value (a deposit
 * confirmed or reverted since is null), so a save writes the state at its position whatever was
 * saved in between.
 */
export class FollowerChanges {
  readonly watched = new Map<string, WatchedEntry>();
  readonly unconfirmed = new Map<string, { ref: DepositRef; deposit: UnconfirmedDeposit | null }>();
  readonly legacyLogDeposits: LegacyLogDeposit[] = [];

  watch(entry: WatchedEntry): void {
    this.watched.set(`${entry.kind}:${entry.entryKey}`, entry);
  }

  deposit(ref: DepositRef, deposit: UnconfirmedDeposit | null): void {
    this.unconfirmed.set(depositKey(ref), { ref, deposit });
  }

  /** these changes with `later` over them (each entry's last value wins) */
  followedBy(later: FollowerChanges): FollowerChanges {
    const merged = new FollowerChanges();
    for (const changes of [this, later]) {
      for (const entry of changes.watched.values()) merged.watch(entry);
      for (const { ref, deposit } of changes.unconfirmed.values()) merged.deposit(ref, deposit);
      merged.legacyLogDeposits.push(...changes.legacyLogDeposits);
    }
    return merged;
  }

  get empty(): boolean {
    return this.watched.size === 0 && this.unconfirmed.size === 0 && this.legacyLogDeposits.length === 0;
  }
}

/**
 * One chain's watcher checkpoint in PostgreSQL: the position, the watch set in rows (added to as
 * addresses are handed out, never rewritten whole), the unconfirmed deposits and the deposits keyed
 * the old way. Saved in one transaction; only ever moved forward.
 */
export class WatcherCheckpoints {
  private readonly db: Kysely<WatcherCheckpointDatabase>;
  private readonly checkpoint: CheckpointTable;

  constructor(
    db: Kysely<Database>,
    private readonly chainId: string,
  ) {
    this.db = db as unknown as Kysely<WatcherCheckpointDatabase>;
    this.checkpoint = { table: 'chain_watcher_checkpoints', chainId };
  }

  /** the saved state, read in one snapshot; null when none was saved */
  async load(): Promise<FollowerSnapshot | null> {
    return this.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const position = await checkpointPosition(trx as unknown as Kysely<unknown>, this.checkpoint);
        if (position === null) return null;
        const [addresses, unconfirmed, legacy] = await Promise.all([
          trx.selectFrom('chain_watcher_addresses').selectAll().where('chain_id', '=', this.chainId).execute(),
          trx.selectFrom('chain_watcher_unconfirmed').selectAll().where('chain_id', '=', this.chainId).execute(),
          trx.selectFrom('chain_watcher_legacy_deposits').selectAll().where('chain_id', '=', this.chainId).execute(),
        ]);
        return {
          position,
          watched: addresses.map((row): WatchedEntry => {
            if (row.kind === 'service') return { kind: 'service', entryKey: row.entry_key };
            const properties = row.destination_tag === null ? { address: row.address } : { address: row.address, destinationTag: row.destination_tag };
            return { kind: 'account', entryKey: row.entry_key, account: { orgId: row.org_id!, chainId: this.chainId, externalUserId: row.external_user_id!, properties } };
          }),
          unconfirmed: unconfirmed.map((row) => ({
            ref: { chainId: this.chainId, txHash: row.tx_hash, index: row.output_index },
            blockNumber: Number(row.block_number),
            blockHash: row.block_hash,
          })),
          legacyLogDeposits: legacy.map((row) => ({ txHash: row.tx_hash, index: row.log_index, content: row.content })),
        };
      });
  }

  /** the state at `position`, written as the changes since the last save; false when another watcher saved at or past it */
  save(position: bigint, changes: FollowerChanges, now: Date): Promise<boolean> {
    return saveCheckpoint(this.db as unknown as Kysely<unknown>, this.checkpoint, position, now, (trx) => this.write(trx as unknown as Transaction<WatcherCheckpointDatabase>, changes));
  }

  private async write(trx: Transaction<WatcherCheckpointDatabase>, changes: FollowerChanges): Promise<void> {
    const chain_id = this.chainId;
    const addresses = [...changes.watched.values()].map((entry) => ({
      chain_id,
      entry_key: entry.entryKey,
      kind: entry.kind,
      address: entry.kind === 'account' ? entry.account.properties.address : entry.entryKey,
      destination_tag: entry.kind === 'account' ? (entry.account.properties.destinationTag ?? null) : null,
      org_id: entry.kind === 'account' ? entry.account.orgId : null,
      external_user_id: entry.kind === 'account' ? entry.account.externalUserId : null,
    }));
    for (const rows of inSlices(addresses)) {
      await trx
        .insertInto('chain_watcher_addresses')
        .values(rows)
        .onConflict((conflict) =>
          conflict.columns(['chain_id', 'kind', 'entry_key']).doUpdateSet((eb) => ({
            address: eb.ref('excluded.address'),
            destination_tag: eb.ref('excluded.destination_tag'),
            org_id: eb.ref('excluded.org_id'),
            external_user_id: eb.ref('excluded.external_user_id'),
          })),
        )
        .execute();
    }
    const changed = [...changes.unconfirmed.values()];
    for (const rows of inSlices(changed.filter((change) => change.deposit !== null))) {
      const values = rows.map(({ deposit }) => ({ chain_id, tx_hash: deposit!.ref.txHash, output_index: deposit!.ref.index, block_number: deposit!.blockNumber, block_hash: deposit!.blockHash }));
      await trx
        .insertInto('chain_watcher_unconfirmed')
        .values(values)
        .onConflict((conflict) => conflict.columns(['chain_id', 'tx_hash', 'output_index']).doUpdateSet((eb) => ({ block_number: eb.ref('excluded.block_number'), block_hash: eb.ref('excluded.block_hash') })))
        .execute();
    }
    for (const rows of inSlices(changed.filter((change) => change.deposit === null))) {
      await trx
        .deleteFrom('chain_watcher_unconfirmed')
        .where('chain_id', '=', chain_id)
        .where(({ eb, refTuple, tuple }) => eb(refTuple('tx_hash', 'output_index'), 'in', rows.map(({ ref }) => tuple(ref.txHash, ref.index))))
        .execute();
    }
    for (const rows of inSlices(changes.legacyLogDeposits)) {
      await trx
        .insertInto('chain_watcher_legacy_deposits')
        .values(rows.map((deposit) => ({ chain_id, tx_hash: deposit.txHash, log_index: deposit.index, content: deposit.content })))
        .onConflict((conflict) => conflict.columns(['chain_id', 'tx_hash', 'log_index']).doNothing())
        .execute();
    }
  }
}
