import { sql, type Transaction } from 'kysely';
import { sessionWrite } from '../db/session-transaction.js';
import type { Database } from '../db/database.js';
import type { AccountEvent } from '../domain/account/account.js';
import { streamCategories } from '../domain/streams.js';
import type { EventBody } from '../eventstore/port.js';
import { webhookDedupeKey } from '../webhooks/outbox.js';
import { liveOutbox, type OutboxEffects, type Projection } from './projection.js';

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

const rowOf = (recorded: EventBody, data: AccountEvent['data']) => {
  const createdAt = new Date(data.createdAt);
  return {
    seq: recorded.position.toString(),
    org_deposit_account_id: data.orgDepositAccountId,
    org_id: data.orgId,
    chain_id: data.chainId,
    external_user_id: data.externalUserId,
    address: data.properties.address,
    destination_tag: 'destinationTag' in data.properties ? data.properties.destinationTag : null,
    created_at: createdAt,
    updated_at: createdAt,
  };
};

/** One insert and one outbox insert per batch, in event order (a second account for a key fails on its constraint, as before). */
const handleBatch = async (trx: Transaction<Database>, batch: EventBody[], outbox: OutboxEffects = liveOutbox): Promise<void> => {
  const created = batch.map((recorded) => ({ recorded, data: recorded.data as AccountEvent['data'] }));
  const rows = created.map(({ recorded, data }) => rowOf(recorded, data));
  const column = <Key extends keyof (typeof rows)[number]>(key: Key) => rows.map((row) => row[key]);
  await sessionWrite(
    trx,
    sql`
    insert into accounts (seq, org_deposit_account_id, org_id, chain_id, external_user_id, address, destination_tag, created_at, updated_at)
    select * from unnest(${column('seq')}::bigint[], ${column('org_deposit_account_id')}::text[], ${column('org_id')}::text[], ${column('chain_id')}::text[],
                         ${column('external_user_id')}::text[], ${column('address')}::text[], ${column('destination_tag')}::text[],
                         ${column('created_at')}::timestamptz[], ${column('updated_at')}::timestamptz[])
  `,
  );
  if (!outbox.sends) return;
  await outbox.enqueue(
    trx,
    created.map(({ recorded, data }) => ({
      orgId: data.orgId,
      type: 'account.created',
      payload: accountCreatedPayload(data),
      timestamp: new Date(data.createdAt),
      dedupeKey: webhookDedupeKey(data.orgId, 'account.created', recorded.id),
    })),
  );
};

/** Deposit accounts for GET /accounts and deposit matching; sends account.created. */
export const accountsProjection: Projection = {
  name: ACCOUNTS_PROJECTION,
  filter: { categories: [streamCategories.account], types: ['AccountCreated'] },
  tables: ['accounts'],
  handle: (trx, recorded, outbox) => handleBatch(trx, [recorded], outbox),
  handleBatch,
};
