import type { Transaction } from 'kysely';
import { tokenSummaryOf } from '../chains/tokens.js';
import type { Database } from '../db/database.js';
import type { DepositEvent } from '../domain/deposit/deposit.js';
import { streamCategories } from '../domain/streams.js';
import type { RecordedEvent } from '../eventstore/port.js';
import { enqueueWebhook, webhookDedupeKey } from '../webhooks/outbox.js';
import type { Projection } from './projection.js';

export const DEPOSITS_PROJECTION = 'deposits';

type DepositRow = {
  chain_id: string;
  tx_hash: string;
  token_id: string;
  amount: string;
  external_user_id: string | null;
  account_chain_id: string | null;
  sender_address: string;
  block_number: string | number;
};

/** SPEC §6.4's deposit.detected payload; deposit.confirmed is the same with its final confirmations (CONTRACT §7). */
export const depositWebhookPayload = (row: DepositRow, confirmations: number) => ({
  chainId: row.chain_id,
  txnHash: row.tx_hash,
  tokenId: row.token_id,
  amount: row.amount,
  externalUserId: row.external_user_id,
  accountChainId: row.account_chain_id,
  senderAddress: row.sender_address,
  blockNumber: Number(row.block_number),
  confirmations,
  Token: tokenSummaryOf(row.token_id),
});

const byRef = (data: { chainId: string; txHash: string; index: number }) =>
  ({ chain_id: data.chainId, tx_hash: data.txHash, output_index: data.index }) as const;

const detected = async (trx: Transaction<Database>, recorded: RecordedEvent, data: Extract<DepositEvent, { type: 'DepositDetected' }>['data']) => {
  const at = new Date(data.detectedAt);
  const row = {
    ...byRef(data),
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
    created_at: at,
    updated_at: at,
  };
  await trx.insertInto('deposits').values(row).execute();
  // only deposits that will be credited are announced: the others never reach a balance
  if (data.credit !== 'credit' || data.orgId === null) return;
  await enqueueWebhook(trx, {
    orgId: data.orgId,
    type: 'deposit.detected',
    payload: depositWebhookPayload(row, 0),
    timestamp: at,
    dedupeKey: webhookDedupeKey(data.orgId, 'deposit.detected', recorded.id),
  });
};

const confirmed = async (trx: Transaction<Database>, recorded: RecordedEvent, data: Extract<DepositEvent, { type: 'DepositConfirmed' }>['data']) => {
  const at = new Date(data.confirmedAt);
  const row = await trx
    .updateTable('deposits')
    .set({ confirmations: data.confirmations, confirmed: true, updated_at: at })
    .where('chain_id', '=', data.chainId)
    .where('tx_hash', '=', data.txHash)
    .where('output_index', '=', data.index)
    .returningAll()
    .executeTakeFirstOrThrow(() => new Error(`deposit ${data.chainId} ${data.txHash}#${data.index} confirmed but never detected`));
  if (!data.credited || row.org_id === null) return;
  await enqueueWebhook(trx, {
    orgId: row.org_id,
    type: 'deposit.confirmed',
    payload: depositWebhookPayload(row, data.confirmations),
    timestamp: at,
    dedupeKey: webhookDedupeKey(row.org_id, 'deposit.confirmed', recorded.id),
  });
};

/**
 * Deposits for GET /payments and GET /payments/:userId/deposits; sends deposit.detected and
 * deposit.confirmed. A reverted deposit's row is deleted (its block left the chain); a later
 * detection of the same transfer inserts it again.
 */
export const depositsProjection: Projection = {
  name: DEPOSITS_PROJECTION,
  filter: { categories: [streamCategories.deposit] },
  tables: ['deposits'],
  handle: async (trx, recorded) => {
    const event = { type: recorded.type, data: recorded.data } as DepositEvent;
    switch (event.type) {
      case 'DepositDetected':
        return detected(trx, recorded, event.data);
      case 'DepositConfirmed':
        return confirmed(trx, recorded, event.data);
      case 'DepositReverted':
        await trx
          .deleteFrom('deposits')
          .where('chain_id', '=', event.data.chainId)
          .where('tx_hash', '=', event.data.txHash)
          .where('output_index', '=', event.data.index)
          .execute();
        return;
      default: {
        const _never: never = event;
      }
    }
  },
};
