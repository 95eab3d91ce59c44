import type { AccountEvent } from '../domain/account/account.js';
import { streamCategories } from '../domain/streams.js';
import { enqueueWebhook, webhookDedupeKey } from '../webhooks/outbox.js';
import type { Projection } from './projection.js';

export const ACCOUNTS_PROJECTION = 'accounts';

/** SPEC §6.4: account.created carries the account fields of §2.4 except updatedAt. */
export const accountCreatedPayload = (data: AccountEvent['data']) => ({
  orgId: data.orgId,
  chainId: data.chainId,
  externalUserId: data.externalUserId,
  orgDepositAccountId: data.orgDepositAccountId,
  properties: data.properties,
  createdAt: data.createdAt,
});

/** Deposit accounts for GET /accounts and deposit matching; sends account.created. */
export const accountsProjection: Projection = {
  name: ACCOUNTS_PROJECTION,
  filter: { categories: [streamCategories.account], types: ['AccountCreated'] },
  tables: ['accounts'],
  handle: async (trx, recorded) => {
    const { data } = { type: recorded.type, data: recorded.data } as AccountEvent;
    const createdAt = new Date(data.createdAt);
    await trx
      .insertInto('accounts')
      .values({
        seq: recorded.position.toString(),
        org_deposit_account_id: data.orgDepositAccountId,
        org_id: data.orgId,
        chain_id: data.chainId,
        external_user_id: data.externalUserId,
        address: data.properties.address,
        destination_tag: 'destinationTag' in data.properties ? data.properties.destinationTag : null,
        created_at: createdAt,
        updated_at: createdAt,
      })
      .execute();
    await enqueueWebhook(trx, {
      orgId: data.orgId,
      type: 'account.created',
      payload: accountCreatedPayload(data),
      timestamp: createdAt,
      dedupeKey: webhookDedupeKey(data.orgId, 'account.created', recorded.id),
    });
  },
};
