import { sql, type Transaction } from 'kysely';
import { sessionWrite } from '../db/session-transaction.js';
import { tokenSummaryOf } from '../catalog/tokens.js';
import type { Database } from '../db/database.js';
import type { DepositStatus } from '../db/tables/deposits.js';
import type { DepositEvent, DepositRef } from '../domain/deposit/deposit.js';
import { streamCategories } from '../domain/streams.js';
import type { EventBody } from '../eventstore/port.js';
import { webhookDedupeKey, type WebhookToEnqueue } from '../webhooks/outbox.js';
import { liveOutbox, type OutboxEffects, type Projection } from './projection.js';

export const DEPOSITS_PROJECTION = 'deposits';

type DepositRow = {
  chain_id: string;
  tx_hash: string;
  output_index: number;
  to_address: string;
  status: DepositStatus;
  token_id: string;
  amount: string;
  external_user_id: string | null;
  account_chain_id: string | null;
  sender_address: string;
  block_number: string | number;
};

/**
 * SPEC §6.4's deposit.detected payload; deposit.confirmed is the same with its final confirmations
 * (CONTRACT §7), and both carry CONTRACT §6's reconciliation fields (status, output index, address).
 */
export const depositWebhookPayload = (row: DepositRow, confirmations: number) => ({
  chainId: row.chain_id,
  txnHash: row.tx_hash,
  outputIndex: row.output_index,
  toAddress: row.to_address,
  status: row.status,
  tokenId: row.token_id,
  amount: row.amount,
  externalUserId: row.external_user_id,
  accountChainId: row.account_chain_id,
  senderAddress: row.sender_address,
  blockNumber: Number(row.block_number),
  confirmations,
  Token: tokenSummaryOf(row.token_id),
});

const keyOf = ({ chainId, txHash, index }: DepositRef) => JSON.stringify([chainId, txHash, index]);

const nameOf = ({ chainId, txHash, index }: DepositRef) => `deposit ${chainId} ${txHash}#${index}`;

/** The row a detection inserts. */
const detectedRow = (recorded: EventBody, data: Extract<DepositEvent, { type: 'DepositDetected' }>['data']) => {
  const at = new Date(data.detectedAt);
  return {
    chain_id: data.chainId,
    tx_hash: data.txHash,
    output_index: data.index,
    seq: recorded.position.toString(),
    org_id: data.orgId,
    external_user_id: data.externalUserId,
    account_chain_id: data.accountChainId,
    token_id: data.tokenId,
    amount: data.amount,
    sender_address: data.senderAddress,
    to_address: data.toAddress,
    destination_tag: data.destinationTag,
    block_number: data.blockNumber,
    block_hash: data.blockHash,
    credit: data.credit,
    confirmations: 0,
    confirmed: false,
    status: 'detected' as DepositStatus,
    created_at: at,
    updated_at: at,
  };
};

type InsertedRow = ReturnType<typeof detectedRow>;

/** A row as the batch leaves it: the fields webhooks read, and the ones a confirmation changes. */
interface Current {
  row: DepositRow & { org_id: string | null };
  confirmations: number;
  confirmed: boolean;
  updated_at: Date;
  /** set when the row was detected in this batch: it is inserted whole */
  inserted: InsertedRow | null;
}

/** One deposit through the batch: whether a row was stored before it, and the row it leaves (null: none). */
interface Folded {
  stored: boolean;
  current: Current | null;
}

const loadStored = async (trx: Transaction<Database>, refs: DepositRef[]): Promise<Map<string, Folded>> => {
  const { rows } = await sql<Current['row'] & { confirmations: number; confirmed: boolean; updated_at: Date }>`
    select chain_id, tx_hash, output_index, to_address, status, org_id, token_id, amount, external_user_id, account_chain_id, sender_address, block_number,
           confirmations, confirmed, updated_at
    from deposits
    where (chain_id, tx_hash, output_index) in (
      select * from unnest(${refs.map((ref) => ref.chainId)}::text[], ${refs.map((ref) => ref.txHash)}::text[], ${refs.map((ref) => ref.index)}::int[]))
    for update
  `.execute(trx);
  const folded = new Map<string, Folded>();
  for (const { confirmations, confirmed, updated_at, ...row } of rows) {
    folded.set(keyOf({ chainId: row.chain_id, txHash: row.tx_hash, index: row.output_index }), { stored: true, current: { row, confirmations, confirmed, updated_at, inserted: null } });
  }
  return folded;
};

const insertRows = async (trx: Transaction<Database>, rows: InsertedRow[]) => {
  if (rows.length === 0) return;
  const column = <Key extends keyof InsertedRow>(key: Key) => rows.map((row) => row[key]);
  await sessionWrite(trx, sql`
    insert into deposits (chain_id, tx_hash, output_index, seq, org_id, external_user_id, account_chain_id, token_id, amount, sender_address,
                          to_address, destination_tag, block_number, block_hash, credit, confirmations, confirmed, status, created_at, updated_at)
    select * from unnest(${column('chain_id')}::text[], ${column('tx_hash')}::text[], ${column('output_index')}::int[], ${column('seq')}::bigint[],
                         ${column('org_id')}::text[], ${column('external_user_id')}::text[], ${column('account_chain_id')}::text[], ${column('token_id')}::text[],
                         ${column('amount')}::numeric[], ${column('sender_address')}::text[], ${column('to_address')}::text[], ${column('destination_tag')}::bigint[],
                         ${column('block_number')}::bigint[], ${column('block_hash')}::text[], ${column('credit')}::text[], ${column('confirmations')}::int[],
                         ${column('confirmed')}::boolean[], ${column('status')}::text[], ${column('created_at')}::timestamptz[], ${column('updated_at')}::timestamptz[])
  `);
};

/**
 * The batch's writes in a constant number of statements: the stored rows it touches are read and
 * locked at once, each deposit's events are folded in memory in event order (each webhook drawn from
 * the row of that moment, as the per-event statements did), then the rows reverted or detected anew
 * are deleted, the detected ones inserted and the confirmed ones updated, one statement each.
 */
const handleBatch = async (trx: Transaction<Database>, batch: EventBody[], outbox: OutboxEffects = liveOutbox): Promise<void> => {
  const events = batch.map((recorded) => ({ recorded, event: { type: recorded.type, data: recorded.data } as DepositEvent }));
  const refs = new Map(events.map(({ event }) => [keyOf(event.data), { chainId: event.data.chainId, txHash: event.data.txHash, index: event.data.index }]));
  const folded = await loadStored(trx, [...refs.values()]);
  const webhooks: WebhookToEnqueue[] = [];
  for (const { recorded, event } of events) {
    const key = keyOf(event.data);
    const entry = folded.get(key) ?? { stored: false, current: null };
    folded.set(key, entry);
    switch (event.type) {
      case 'DepositDetected': {
        // a second detection of a present row fails, as its insert did on the primary key; a reverted row gives way
        if (entry.current && entry.current.row.status !== 'reverted') throw new Error(`${nameOf(event.data)} detected while its row is present`);
        const inserted = detectedRow(recorded, event.data);
        entry.current = { row: inserted, confirmations: 0, confirmed: false, updated_at: inserted.updated_at, inserted };
        // only deposits that will be credited are announced: the others never reach a balance
        if (!outbox.sends || event.data.credit !== 'credit' || event.data.orgId === null) break;
        webhooks.push({
          orgId: event.data.orgId,
          type: 'deposit.detected',
          payload: depositWebhookPayload(inserted, 0),
          timestamp: inserted.created_at,
          dedupeKey: webhookDedupeKey(event.data.orgId, 'deposit.detected', recorded.id),
        });
        break;
      }
      case 'DepositConfirmed': {
        const current = entry.current;
        if (!current) throw new Error(`${nameOf(event.data)} confirmed but never detected`);
        const at = new Date(event.data.confirmedAt);
        Object.assign(current, { confirmations: event.data.confirmations, confirmed: true, updated_at: at });
        current.row = { ...current.row, status: 'confirmed' };
        if (current.inserted) Object.assign(current.inserted, { confirmations: event.data.confirmations, confirmed: true, status: 'confirmed', updated_at: at });
        if (!outbox.sends || !event.data.credited || current.row.org_id === null) break;
        webhooks.push({
          orgId: current.row.org_id,
          type: 'deposit.confirmed',
          // the amount as the numeric column gives it back
          payload: depositWebhookPayload({ ...current.row, amount: BigInt(current.row.amount).toString() }, event.data.confirmations),
          timestamp: at,
          dedupeKey: webhookDedupeKey(current.row.org_id, 'deposit.confirmed', recorded.id),
        });
        break;
      }
      case 'DepositReverted': {
        // the row stays, as reverted (CONTRACT §6), until the same transfer is detected again
        const current = entry.current;
        if (!current) throw new Error(`${nameOf(event.data)} reverted but never detected`);
        const at = new Date(event.data.revertedAt);
        current.updated_at = at;
        current.row = { ...current.row, status: 'reverted' };
        if (current.inserted) Object.assign(current.inserted, { status: 'reverted', updated_at: at });
        break;
      }
      default: {
        const _never: never = event;
      }
    }
  }
  const deleted = [...refs].filter(([key]) => {
    const { stored, current } = folded.get(key)!;
    return stored && (current === null || current.inserted !== null);
  });
  if (deleted.length > 0) {
    await sessionWrite(trx, sql`
      delete from deposits
      where (chain_id, tx_hash, output_index) in (
        select * from unnest(${deleted.map(([, ref]) => ref.chainId)}::text[], ${deleted.map(([, ref]) => ref.txHash)}::text[], ${deleted.map(([, ref]) => ref.index)}::int[]))
    `);
  }
  await insertRows(
    trx,
    [...folded.values()].flatMap(({ current }) => (current?.inserted ? [current.inserted] : [])),
  );
  // a stored row still there and not detected anew was confirmed or reverted in the batch (or untouched: written as it was)
  const updated = [...folded.values()].flatMap(({ stored, current }) => (stored && current && current.inserted === null ? [current] : []));
  if (updated.length > 0) {
    await sessionWrite(trx, sql`
      update deposits as row
      set confirmations = change.confirmations, confirmed = change.confirmed, status = change.status, updated_at = change.updated_at
      from unnest(${updated.map(({ row }) => row.chain_id)}::text[], ${updated.map(({ row }) => row.tx_hash)}::text[], ${updated.map(({ row }) => row.output_index)}::int[],
                  ${updated.map((current) => current.confirmations)}::int[], ${updated.map((current) => current.confirmed)}::boolean[],
                  ${updated.map(({ row }) => row.status)}::text[], ${updated.map((current) => current.updated_at)}::timestamptz[])
           as change (chain_id, tx_hash, output_index, confirmations, confirmed, status, updated_at)
      where (row.chain_id, row.tx_hash, row.output_index) = (change.chain_id, change.tx_hash, change.output_index)
    `);
  }
  await outbox.enqueue(trx, webhooks);
};

/**
 * Deposits for GET /payments and GET /payments/:userId/deposits; sends deposit.detected and
 * deposit.confirmed. A reverted deposit's row stays with status `reverted` (its block left the
 * chain, it never reaches a balance); a later detection of the same transfer replaces it.
 */
export const depositsProjection: Projection = {
  name: DEPOSITS_PROJECTION,
  filter: { categories: [streamCategories.deposit] },
  tables: ['deposits'],
  handle: (trx, recorded, outbox) => handleBatch(trx, [recorded], outbox),
  handleBatch,
};
