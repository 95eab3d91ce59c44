import { sql, type Transaction } from 'kysely';
import type { Database } from '../db/database.js';
import type { OrganizationEvent } from '../domain/organization/events.js';
import { streamCategories } from '../domain/streams.js';
import type { EventBody } from '../eventstore/port.js';
import { liveOutbox, type OutboxEffects, type Projection } from './projection.js';

export const ORGANIZATIONS_PROJECTION = 'organizations';

type SwitchColumn = 'disabled_chain_ids' | 'disabled_token_ids';

// remove before append: the list holds an id once, whatever the events say
const switchOff = (trx: Transaction<Database>, orgId: string, column: SwitchColumn, id: string, at: string) =>
  trx
    .updateTable('organizations')
    .set({ [column]: sql<string[]>`array_append(array_remove(${sql.ref(column)}, ${id}), ${id})`, updated_at: new Date(at) })
    .where('id', '=', orgId)
    .execute();

const switchOn = (trx: Transaction<Database>, orgId: string, column: SwitchColumn, id: string, at: string) =>
  trx
    .updateTable('organizations')
    .set({ [column]: sql<string[]>`array_remove(${sql.ref(column)}, ${id})`, updated_at: new Date(at) })
    .where('id', '=', orgId)
    .execute();

const apply = async (trx: Transaction<Database>, event: OrganizationEvent, outbox: OutboxEffects) => {
  switch (event.type) {
    case 'OrganizationCreated': {
      const { orgId, name, webhookUrl, webhookSigningSecretEncrypted, minWithdrawalSigners, createdAt } = event.data;
      await trx
        .insertInto('organizations')
        .values({
          id: orgId,
          name,
          webhook_url: webhookUrl,
          webhook_signing_secret_encrypted: webhookSigningSecretEncrypted,
          min_withdrawal_signers: minWithdrawalSigners,
          created_at: new Date(createdAt),
          updated_at: new Date(createdAt),
        })
        .execute();
      return;
    }
    case 'UserAdded': {
      const { userId, orgId, username, addedAt } = event.data;
      await trx.insertInto('users').values({ id: userId, org_id: orgId, username, created_at: new Date(addedAt) }).execute();
      await trx.updateTable('organizations').set({ updated_at: new Date(addedAt) }).where('id', '=', orgId).execute();
      return;
    }
    case 'ApiKeyIssued': {
      const { keyId, keyDigest, orgId, userId, revokedKeyId, issuedAt } = event.data;
      if (revokedKeyId) await trx.updateTable('api_keys').set({ revoked_at: new Date(issuedAt) }).where('key_id', '=', revokedKeyId).execute();
      await trx
        .insertInto('api_keys')
        .values({ key_id: keyId, org_id: orgId, user_id: userId, key_digest: keyDigest, created_at: new Date(issuedAt) })
        .execute();
      await trx.updateTable('organizations').set({ updated_at: new Date(issuedAt) }).where('id', '=', orgId).execute();
      return;
    }
    case 'WebhookUrlSet':
      await trx
        .updateTable('organizations')
        .set({ webhook_url: event.data.webhookUrl, updated_at: new Date(event.data.setAt) })
        .where('id', '=', event.data.orgId)
        .execute();
      // CONTRACT §7: what waited for a URL is sent now
      await outbox.releaseWaiting(trx, event.data.orgId);
      return;
    case 'WebhookSigningSecretRotated':
      await trx
        .updateTable('organizations')
        .set({ webhook_signing_secret_encrypted: event.data.webhookSigningSecretEncrypted, updated_at: new Date(event.data.rotatedAt) })
        .where('id', '=', event.data.orgId)
        .execute();
      return;
    case 'MinWithdrawalSignersChanged':
      await trx
        .updateTable('organizations')
        .set({ min_withdrawal_signers: event.data.minWithdrawalSigners, updated_at: new Date(event.data.changedAt) })
        .where('id', '=', event.data.orgId)
        .execute();
      return;
    case 'ChainDisabled':
      await switchOff(trx, event.data.orgId, 'disabled_chain_ids', event.data.chainId, event.data.disabledAt);
      return;
    case 'ChainEnabled':
      await switchOn(trx, event.data.orgId, 'disabled_chain_ids', event.data.chainId, event.data.enabledAt);
      return;
    case 'TokenDisabled':
      await switchOff(trx, event.data.orgId, 'disabled_token_ids', event.data.tokenId, event.data.disabledAt);
      return;
    case 'TokenEnabled':
      await switchOn(trx, event.data.orgId, 'disabled_token_ids', event.data.tokenId, event.data.enabledAt);
      return;
    default: {
      const _exhaustive: never = event;
    }
  }
};

/** Organizations, their users and API keys: what authentication and GET /organisation read. */
export const organizationsProjection: Projection = {
  name: ORGANIZATIONS_PROJECTION,
  filter: { categories: [streamCategories.organization] },
  tables: ['api_keys', 'users', 'organizations'],
  handle: (trx, event: EventBody, outbox = liveOutbox) => apply(trx, { type: event.type, data: event.data } as OrganizationEvent, outbox),
};
