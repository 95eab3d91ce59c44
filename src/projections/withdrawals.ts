import type { Transaction } from 'kysely';
import { withdrawalCompletedPayload, withdrawalDetail } from '../application/withdrawal-resource.js';
import type { Database } from '../db/database.js';
import { streamCategories } from '../domain/streams.js';
import { evolveWithdrawal, type WithdrawalEvent, type WithdrawalRecord } from '../domain/withdrawal/withdrawal.js';
import type { RecordedEvent } from '../eventstore/port.js';
import { enqueueWebhook, webhookDedupeKey } from '../webhooks/outbox.js';
import type { Projection } from './projection.js';

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

const columnsOf = (withdrawal: WithdrawalRecord) => ({
  status: withdrawal.status,
  txn_hash: withdrawal.txnHash,
  state: JSON.stringify(withdrawal),
  updated_at: new Date(withdrawal.updatedAt),
});

const apply = async (trx: Transaction<Database>, recorded: RecordedEvent, event: WithdrawalEvent): Promise<WithdrawalRecord> => {
  if (event.type === 'WithdrawalRequested') {
    const withdrawal = evolveWithdrawal({ status: 'None' }, event) as WithdrawalRecord;
    await trx
      .insertInto('withdrawals')
      .values({
        id: withdrawal.id,
        seq: recorded.position.toString(),
        org_id: withdrawal.orgId,
        chain_id: withdrawal.chainId,
        token_id: withdrawal.tokenId,
        amount: withdrawal.amount,
        reference: withdrawal.reference,
        created_at: new Date(withdrawal.createdAt),
        ...columnsOf(withdrawal),
      })
      .execute();
    return withdrawal;
  }
  const row = await trx
    .selectFrom('withdrawals')
    .select('state')
    .where('id', '=', event.data.id)
    .forUpdate()
    .executeTakeFirstOrThrow(() => new Error(`withdrawal ${event.data.id}: ${event.type} before WithdrawalRequested`));
  const withdrawal = evolveWithdrawal(row.state, event) as WithdrawalRecord;
  await trx.updateTable('withdrawals').set(columnsOf(withdrawal)).where('id', '=', withdrawal.id).execute();
  return withdrawal;
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
  handle: async (trx, recorded) => {
    const event = { type: recorded.type, data: recorded.data } as WithdrawalEvent;
    const withdrawal = await apply(trx, recorded, event);
    const type = webhookOf(event, withdrawal);
    if (type === null) return;
    await enqueueWebhook(trx, {
      orgId: withdrawal.orgId,
      type,
      payload: type === 'withdrawal.completed' ? withdrawalCompletedPayload(withdrawal) : withdrawalDetail(withdrawal),
      timestamp: new Date(withdrawal.updatedAt),
      dedupeKey: webhookDedupeKey(withdrawal.orgId, type, recorded.id),
    });
  },
};
