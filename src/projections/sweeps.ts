import { sql, type Selectable, type Transaction } from 'kysely';
import { sessionWrite } from '../db/session-transaction.js';
import type { Database } from '../db/database.js';
import type { SweepsTable } from '../db/tables/sweeps.js';
import type { DepositRef } from '../domain/deposit/deposit.js';
import { TERMINAL_SWEEP_STATUSES, type SweepEvent, type SweepStatus } from '../domain/sweep/sweep.js';
import { streamCategories } from '../domain/streams.js';
import type { EventBody } from '../eventstore/port.js';
import { insertRows } from '../db/unnest-rows.js';
import type { BatchMemory, Projection } from './projection.js';

export const SWEEPS_PROJECTION = 'sweeps';

type SweepRow = Selectable<SweepsTable>;

/** A sweep row's columns and their types (rows inserted with one parameter per column, whatever the batch size). */
const SWEEP_COLUMNS = [
  ['chain_id', 'text'],
  ['tx_hash', 'text'],
  ['output_index', 'int'],
  ['org_id', 'text'],
  ['token_id', 'text'],
  ['kind', 'text'],
  ['amount', 'numeric'],
  ['deposit_address', 'text'],
  ['settlement_address', 'text'],
  ['gas_wallet_address', 'text'],
  ['status', 'text'],
  ['reason', 'text'],
  ['top_up_tx_hash', 'text'],
  ['top_up_amount', 'numeric'],
  ['gas_spent', 'numeric'],
  ['sweep_tx_hash', 'text'],
  ['swept_amount', 'numeric'],
  ['fee', 'numeric'],
  ['fee_charged', 'numeric'],
  ['created_at', 'timestamptz'],
  ['updated_at', 'timestamptz'],
] as const;
type SweepChange = Partial<Omit<SweepRow, 'chain_id' | 'tx_hash' | 'output_index' | 'created_at' | 'updated_at'>>;

/** What each event changes in its row (`row` is the row as the events before it left it). */
const changeOf = (event: Exclude<SweepEvent, { type: 'SweepScheduled' }>, row: SweepRow): { change: SweepChange; at: string } => {
  switch (event.type) {
    case 'SweepSkipped':
      return { change: { status: 'Skipped', reason: event.data.reason }, at: event.data.skippedAt };
    case 'SweepWaitingForGas': {
      const reason = `waiting for gas: the gas wallet holds ${event.data.available}, the top-up and its fee need ${event.data.required}`;
      return { change: { status: 'WaitingForGas', reason }, at: event.data.since };
    }
    case 'GasTopUpSigned':
      return { change: { status: 'TopUpSigned', reason: null, top_up_tx_hash: event.data.step.txHash, top_up_amount: event.data.step.amount }, at: event.data.signedAt };
    case 'GasTopUpBroadcast':
      return { change: { status: 'TopUpBroadcast' }, at: event.data.broadcastAt };
    case 'GasTopUpConfirmed': {
      // numeric arithmetic as the column's `top_up_amount + fee` did: null without a top-up
      const gasSpent = row.top_up_amount === null ? null : (BigInt(row.top_up_amount) + BigInt(event.data.fee)).toString();
      return { change: { status: 'TopUpConfirmed', gas_spent: gasSpent }, at: event.data.confirmedAt };
    }
    case 'SweepSigned':
      return { change: { status: 'SweepSigned', reason: null, sweep_tx_hash: event.data.step.txHash, swept_amount: event.data.step.amount }, at: event.data.signedAt };
    case 'SweepBroadcast':
      return { change: { status: 'SweepBroadcast' }, at: event.data.broadcastAt };
    case 'SweepConfirmed':
      return { change: { status: 'Confirmed', fee: event.data.fee, fee_charged: event.data.feeCharged }, at: event.data.confirmedAt };
    case 'SweepFailed':
      return { change: { status: 'Failed', reason: `${event.data.step}: ${event.data.error}` }, at: event.data.failedAt };
    default: {
      const _never: never = event;
      throw new Error('unknown sweep event');
    }
  }
};

const scheduledRow = (plan: Extract<SweepEvent, { type: 'SweepScheduled' }>['data']): SweepRow => {
  const at = new Date(plan.scheduledAt);
  return {
    chain_id: plan.chainId,
    tx_hash: plan.txHash,
    output_index: plan.index,
    org_id: plan.orgId,
    token_id: plan.tokenId,
    kind: plan.kind,
    amount: plan.amount,
    deposit_address: plan.depositAddress,
    settlement_address: plan.settlementAddress,
    gas_wallet_address: plan.gasWalletAddress,
    status: 'Scheduled',
    reason: null,
    top_up_tx_hash: null,
    top_up_amount: null,
    gas_spent: null,
    sweep_tx_hash: null,
    swept_amount: null,
    fee: null,
    fee_charged: null,
    created_at: at,
    updated_at: at,
  };
};

/** One sweep through the batch: its row (null: none yet) and whether it was stored before the batch. */
interface Folded {
  stored: boolean;
  row: SweepRow | null;
}

const keyOf = ({ chainId, txHash, index }: DepositRef) => JSON.stringify([chainId, txHash, index]);

const isTerminalRow = (row: SweepRow) => TERMINAL_SWEEP_STATUSES.includes(row.status as SweepStatus);

/**
 * The batch's writes in a constant number of statements: the stored rows it touches are read and
 * locked at once, each sweep's events are folded in memory in event order, then the new rows are
 * inserted and the stored ones updated, one statement each. An event of a sweep without a row
 * changes nothing, as its update matched nothing. A batch given its session's memory (a
 * rebuild's, or a live runner's) reads none of the rows the session's earlier batches wrote for a
 * sweep that may still change: it remembers them (each equal to its stored row; a terminal one is
 * forgotten, and read from the table if an event ever follows it, as is one the memory no longer
 * holds).
 */
const handleBatch = async (trx: Transaction<Database>, batch: EventBody[], _outbox?: unknown, memory?: BatchMemory): Promise<void> => {
  const remembered = memory?.entries<SweepRow>('rows');
  const events = batch.map((recorded) => ({ type: recorded.type, data: recorded.data }) as SweepEvent);
  const folded = new Map<string, Folded>();
  for (const { data } of events) {
    const row = remembered?.get(keyOf(data));
    if (row) folded.set(keyOf(data), { stored: true, row });
  }
  const refs = [...new Map(events.map(({ data }) => [keyOf(data), data])).entries()].filter(([key]) => !folded.has(key)).map(([, ref]) => ref);
  const stored =
    refs.length === 0
      ? []
      : await trx
          .selectFrom('sweeps')
          .selectAll()
          .where(sql<boolean>`(chain_id, tx_hash, output_index) in (
      select * from unnest(${refs.map((ref) => ref.chainId)}::text[], ${refs.map((ref) => ref.txHash)}::text[], ${refs.map((ref) => ref.index)}::int[]))`)
          .forUpdate()
          .execute();
  for (const row of stored) folded.set(keyOf({ chainId: row.chain_id, txHash: row.tx_hash, index: row.output_index }), { stored: true, row });
  for (const event of events) {
    const key = keyOf(event.data);
    const entry = folded.get(key) ?? { stored: false, row: null };
    folded.set(key, entry);
    if (event.type === 'SweepScheduled') {
      // a second schedule of a sweep with a row fails, as its insert did on the primary key
      if (entry.row) throw new Error(`sweep ${key} scheduled while its row is present`);
      entry.row = scheduledRow(event.data);
    } else if (entry.row) {
      const { change, at } = changeOf(event, entry.row);
      entry.row = { ...entry.row, ...change, updated_at: new Date(at) };
    }
  }
  const created = [...folded.values()].flatMap(({ stored: wasStored, row }) => (!wasStored && row ? [row] : []));
  if (created.length > 0) await sessionWrite(trx, insertRows('sweeps', created, SWEEP_COLUMNS));
  const updated = [...folded.values()].flatMap(({ stored: wasStored, row }) => (wasStored && row ? [row] : []));
  if (updated.length > 0) await updateRows(trx, updated);
  if (!remembered) return;
  for (const [key, { row }] of folded) {
    if (row && !isTerminalRow(row)) remembered.set(key, row);
    else remembered.delete(key);
  }
};

/** The stored rows' new columns, one statement. */
const updateRows = async (trx: Transaction<Database>, updated: readonly SweepRow[]): Promise<void> => {
  const column = <Key extends keyof SweepRow>(key: Key) => updated.map((row) => row[key]);
  await sessionWrite(trx, sql`
    update sweeps as row
    set status = change.status, reason = change.reason, top_up_tx_hash = change.top_up_tx_hash, top_up_amount = change.top_up_amount,
        gas_spent = change.gas_spent, sweep_tx_hash = change.sweep_tx_hash, swept_amount = change.swept_amount, fee = change.fee,
        fee_charged = change.fee_charged, updated_at = change.updated_at
    from unnest(${column('chain_id')}::text[], ${column('tx_hash')}::text[], ${column('output_index')}::int[], ${column('status')}::text[],
                ${column('reason')}::text[], ${column('top_up_tx_hash')}::text[], ${column('top_up_amount')}::numeric[], ${column('gas_spent')}::numeric[],
                ${column('sweep_tx_hash')}::text[], ${column('swept_amount')}::numeric[], ${column('fee')}::numeric[], ${column('fee_charged')}::numeric[],
                ${column('updated_at')}::timestamptz[])
         as change (chain_id, tx_hash, output_index, status, reason, top_up_tx_hash, top_up_amount, gas_spent, sweep_tx_hash, swept_amount, fee, fee_charged, updated_at)
    where (row.chain_id, row.tx_hash, row.output_index) = (change.chain_id, change.tx_hash, change.output_index)
  `);
};

/**
 * The `sweeps` read model: one row per sweep with its status and, while it waits or after it
 * failed, why. Gas a token sweep spends comes from the gas wallet, outside the ledger: the row
 * keeps it (`gas_spent` = top-up + the top-up's fee) so an operator can account for it.
 */
export const sweepsProjection: Projection = {
  name: SWEEPS_PROJECTION,
  filter: { categories: [streamCategories.sweep] },
  tables: ['sweeps'],
  handle: (trx, recorded) => handleBatch(trx, [recorded]),
  handleBatch,
};
