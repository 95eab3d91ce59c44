import { sql, type Transaction } from 'kysely';
import { sessionWrite } from '../db/session-transaction.js';
import { withdrawalCompletedPayload, withdrawalDetail } from '../domain/withdrawal/resource.js';
import type { Database } from '../db/database.js';
import { streamCategories } from '../domain/streams.js';
import { evolveWithdrawal, isTerminal, type WithdrawalEvent, type WithdrawalRecord } from '../domain/withdrawal/withdrawal.js';
import type { EventBody } from '../eventstore/port.js';
import { webhookDedupeKey, type WebhookToEnqueue } from '../webhooks/outbox.js';
import { jsonRows } from '../db/unnest-rows.js';
import { liveOutbox, type OutboxEffects, type Projection, type BatchMemory } from './projection.js';

export const WITHDRAWALS_PROJECTION = 'withdrawals';

type WebhookType = 'withdrawal.created' | 'withdrawal.approved' | 'withdrawal.processing' | 'withdrawal.completed' | 'withdrawal.failed' | 'withdrawal.cancelled';

/**
 * SPEC §6.3 / CONTRACT §7: which event announces what. `withdrawal.approved` means the required
 * approvals are reached (processing will begin), so an approval short of them sends nothing, and
 * neither does the signing (an internal step before the broadcast).
 */
const webhookOf = (event: WithdrawalEvent, after: WithdrawalRecord): WebhookType | null => {
  switch (event.type) {
    case 'WithdrawalRequested':
      return 'withdrawal.created';
    case 'WithdrawalApproved':
      return after.status === 'Pending' ? 'withdrawal.approved' : null;
    case 'WithdrawalCancelled':
      return 'withdrawal.cancelled';
    case 'WithdrawalTransactionSigned':
    case 'WithdrawalTransactionReplaced':
      return null;
    case 'WithdrawalBroadcast':
      return 'withdrawal.processing';
    case 'WithdrawalCompleted':
      return 'withdrawal.completed';
    case 'WithdrawalFailed':
      return 'withdrawal.failed';
    default: {
      const _never: never = event;
      return null;
    }
  }
};

/**
 * A withdrawal's row as it goes out: its state, from which the statements take every other column
 * (withdrawalColumns), and for a new row the position of its request. Rows go out as one JSON
 * parameter (jsonRows) holding each state once: the columns the state already holds are not sent
 * beside it (which made the JSON half as large again, and turning their Dates into text took over
 * half of JSON.stringify's time).
 */
const CHANGE_COLUMNS = [['state', 'jsonb']] as const;
const NEW_ROW_COLUMNS = [
  ['seq', 'bigint'],
  ['state', 'jsonb'],
] as const;

/** The row's columns, each taken from its state (`state`: the JSON document of a WithdrawalRecord) by the statement. */
const withdrawalColumns = (state: string) => {
  const field = (name: keyof WithdrawalRecord) => sql`${sql.ref(state)}->>${sql.lit(name)}`;
  return {
    id: field('id'),
    org_id: field('orgId'),
    chain_id: field('chainId'),
    token_id: field('tokenId'),
    amount: sql`(${field('amount')})::numeric`,
    reference: field('reference'),
    created_at: sql`(${field('createdAt')})::timestamptz`,
    status: field('status'),
    txn_hash: field('txnHash'),
    updated_at: sql`(${field('updatedAt')})::timestamptz`,
  };
};

/** the columns of a new row and of a changed one, built once (the fragments are immutable; each batch's statements reuse them) */
const NEW_ROW = withdrawalColumns('row.state');
const CHANGED_ROW = withdrawalColumns('change.state');

const webhookFor = (recorded: EventBody, event: WithdrawalEvent, withdrawal: WithdrawalRecord): WebhookToEnqueue | null => {
  const type = webhookOf(event, withdrawal);
  if (type === null) return null;
  return {
    orgId: withdrawal.orgId,
    type,
    payload: type === 'withdrawal.completed' ? withdrawalCompletedPayload(withdrawal) : withdrawalDetail(withdrawal),
    timestamp: new Date(withdrawal.updatedAt),
    dedupeKey: webhookDedupeKey(withdrawal.orgId, type, recorded.id),
  };
};

/** A withdrawal as the batch leaves it; `requestedAt` is set when its request is in the batch (its row is new). */
interface Folded {
  withdrawal: WithdrawalRecord;
  requestedAt: bigint | null;
}

/**
 * The batch's writes in a constant number of statements: the existing rows it touches are read
 * and locked at once, each withdrawal's events are folded in memory in event order (each event's
 * webhook drawn from the state it leaves, as before), then new rows are inserted and existing
 * ones updated, one statement each. A batch given its session's memory (a rebuild's, or a live
 * runner's) reads none of the rows the session's earlier batches left in a state that may still
 * change: it remembers their states (each equal to its row's `state`; a terminal one is forgotten,
 * and read from the table if an event ever follows it, as is one the memory no longer holds), so
 * a live batch that only moves withdrawals it wrote before is one round trip, not two.
 */
const handleBatch = async (trx: Transaction<Database>, batch: EventBody[], outbox: OutboxEffects = liveOutbox, memory?: BatchMemory): Promise<void> => {
  const remembered = memory?.entries<WithdrawalRecord>('states');
  const events = batch.map((recorded) => ({ recorded, event: { type: recorded.type, data: recorded.data } as WithdrawalEvent }));
  const requested = new Set(events.flatMap(({ event }) => (event.type === 'WithdrawalRequested' ? [event.data.id] : [])));
  const existingIds = [...new Set(events.map(({ event }) => event.data.id))].filter((id) => !requested.has(id));
  const folded = new Map<string, Folded>();
  for (const id of existingIds) {
    const state = remembered?.get(id);
    if (state) folded.set(id, { withdrawal: state, requestedAt: null });
  }
  const unread = existingIds.filter((id) => !folded.has(id));
  if (unread.length > 0) {
    const rows = await trx.selectFrom('withdrawals').select(['id', 'state']).where('id', '=', sql<string>`any(${unread}::text[])`).forUpdate().execute();
    for (const row of rows) folded.set(row.id, { withdrawal: row.state, requestedAt: null });
  }
  const webhooks: WebhookToEnqueue[] = [];
  for (const { recorded, event } of events) {
    const before = folded.get(event.data.id);
    let after: Folded;
    if (event.type === 'WithdrawalRequested') {
      // a second request of a stored withdrawal fails on the primary key below, as a single insert did
      after = { withdrawal: evolveWithdrawal({ status: 'None' }, event) as WithdrawalRecord, requestedAt: before?.requestedAt ?? recorded.position };
    } else {
      if (!before) throw new Error(`withdrawal ${event.data.id}: ${event.type} before WithdrawalRequested`);
      after = { ...before, withdrawal: evolveWithdrawal(before.withdrawal, event) as WithdrawalRecord };
    }
    folded.set(event.data.id, after);
    const webhook = outbox.sends ? webhookFor(recorded, event, after.withdrawal) : null;
    if (webhook) webhooks.push(webhook);
  }
  const created = [...folded.values()].filter((entry) => entry.requestedAt !== null);
  const updated = [...folded.values()].filter((entry) => entry.requestedAt === null).map((entry) => entry.withdrawal);
  if (created.length > 0) {
    const rows = created.map(({ withdrawal, requestedAt }) => ({ seq: requestedAt!.toString(), state: withdrawal }));
    const { id, org_id, chain_id, token_id, amount, reference, created_at, status, txn_hash, updated_at } = NEW_ROW;
    await sessionWrite(
      trx,
      sql`
      insert into withdrawals (id, seq, org_id, chain_id, token_id, amount, reference, created_at, status, txn_hash, state, updated_at)
      select ${id}, row.seq, ${org_id}, ${chain_id}, ${token_id}, ${amount}, ${reference}, ${created_at}, ${status}, ${txn_hash}, row.state, ${updated_at}
      from ${jsonRows(rows, NEW_ROW_COLUMNS, 'row')}
    `,
    );
  }
  if (updated.length > 0) {
    const { id, status, txn_hash, updated_at } = CHANGED_ROW;
    await sessionWrite(
      trx,
      sql`
      update withdrawals as row
      set status = ${status}, txn_hash = ${txn_hash}, state = change.state, updated_at = ${updated_at}
      from ${jsonRows(
        updated.map((state) => ({ state })),
        CHANGE_COLUMNS,
        'change',
      )}
      where row.id = ${id}
    `,
    );
  }
  await outbox.enqueue(trx, webhooks);
  if (!remembered) return;
  for (const { withdrawal } of folded.values()) {
    if (isTerminal(withdrawal.status)) remembered.delete(withdrawal.id);
    else remembered.set(withdrawal.id, withdrawal);
  }
};

/**
 * Withdrawals for GET /withdrawals (single reads come from the stream itself); sends the
 * withdrawal.* webhooks, each with the single-withdrawal read of that moment (CONTRACT §7).
 * balance.updated for holds comes from the balances projection (ledger events).
 */
export const withdrawalsProjection: Projection = {
  name: WITHDRAWALS_PROJECTION,
  filter: { categories: [streamCategories.withdrawal] },
  tables: ['withdrawals'],
  handle: (trx, recorded, outbox) => handleBatch(trx, [recorded], outbox),
  handleBatch,
};
