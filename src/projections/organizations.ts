import { sql, type Transaction } from 'kysely';
import { sessionWrite } from '../db/session-transaction.js';
import type { Database } from '../db/database.js';
import { insertRows, jsonRows, type UnnestColumn } from '../db/unnest-rows.js';
import type { OrganizationEvent } from '../domain/organization/events.js';
import { streamCategories } from '../domain/streams.js';
import type { EventBody } from '../eventstore/port.js';
import { liveOutbox, type OutboxEffects, type Projection } from './projection.js';

export const ORGANIZATIONS_PROJECTION = 'organizations';

interface OrganizationRow {
  id: string;
  name: string;
  webhook_url: string | null;
  webhook_signing_secret_encrypted: string;
  min_withdrawal_signers: number;
  created_at: Date;
  updated_at: Date;
}

interface UserRow {
  id: string;
  org_id: string;
  username: string;
  created_at: Date;
}

interface ApiKeyRow {
  key_id: string;
  org_id: string;
  user_id: string;
  key_digest: string;
  created_at: Date;
  revoked_at: Date | null;
}

/** A switch list's changes in a batch: the ids the batch switched on or off, and those it left off, in the order of their last switch off. */
interface SwitchChanges {
  touched: Set<string>;
  off: Map<string, true>;
}

/**
 * What a batch's events change of one organization's row that was there before them (or that the
 * batch created before them): its last event's time, and each field its last event that set it.
 */
interface OrganizationChange {
  id: string;
  updated_at: Date;
  url_set: boolean;
  webhook_url: string | null;
  webhook_signing_secret_encrypted: string | null;
  min_withdrawal_signers: number | null;
  chains: SwitchChanges;
  tokens: SwitchChanges;
}

const ORGANIZATION_COLUMNS: readonly UnnestColumn<OrganizationRow>[] = [
  ['id', 'text'],
  ['name', 'text'],
  ['webhook_url', 'text'],
  ['webhook_signing_secret_encrypted', 'text'],
  ['min_withdrawal_signers', 'integer'],
  ['created_at', 'timestamptz'],
  ['updated_at', 'timestamptz'],
];
const USER_COLUMNS: readonly UnnestColumn<UserRow>[] = [
  ['id', 'text'],
  ['org_id', 'text'],
  ['username', 'text'],
  ['created_at', 'timestamptz'],
];
const API_KEY_COLUMNS: readonly UnnestColumn<ApiKeyRow>[] = [
  ['key_id', 'text'],
  ['org_id', 'text'],
  ['user_id', 'text'],
  ['key_digest', 'text'],
  ['created_at', 'timestamptz'],
  ['revoked_at', 'timestamptz'],
];

/** A change as the update statement reads it (one JSON row). */
const changeColumnsOf = (change: OrganizationChange) => ({
  id: change.id,
  updated_at: change.updated_at,
  url_set: change.url_set,
  webhook_url: change.webhook_url,
  webhook_signing_secret_encrypted: change.webhook_signing_secret_encrypted,
  min_withdrawal_signers: change.min_withdrawal_signers,
  chains_touched: [...change.chains.touched],
  chains_off: [...change.chains.off.keys()],
  tokens_touched: [...change.tokens.touched],
  tokens_off: [...change.tokens.off.keys()],
});

const CHANGE_COLUMNS: readonly UnnestColumn<ReturnType<typeof changeColumnsOf>>[] = [
  ['id', 'text'],
  ['updated_at', 'timestamptz'],
  ['url_set', 'boolean'],
  ['webhook_url', 'text'],
  ['webhook_signing_secret_encrypted', 'text'],
  ['min_withdrawal_signers', 'integer'],
  ['chains_touched', 'text[]'],
  ['chains_off', 'text[]'],
  ['tokens_touched', 'text[]'],
  ['tokens_off', 'text[]'],
];

/**
 * A switch turned off: the id taken out of the list and put at its end (the list holds an id once,
 * whatever the events say); turned on: taken out. So after a batch the list is the ids it did not
 * touch, in their order, then those whose last switch was off, in the order of those switches.
 */
const switchOff = (changes: SwitchChanges, id: string) => {
  changes.touched.add(id);
  changes.off.delete(id);
  changes.off.set(id, true);
};
const switchOn = (changes: SwitchChanges, id: string) => {
  changes.touched.add(id);
  changes.off.delete(id);
};

/** The rows and changes of one batch, folded in event order. */
class OrganizationsBatch {
  readonly created: OrganizationRow[] = [];
  readonly users: UserRow[] = [];
  readonly keys: ApiKeyRow[] = [];
  /** the keys issued before this batch that it revokes, each at the time of the last revocation */
  readonly revoked = new Map<string, Date>();
  readonly changes = new Map<string, OrganizationChange>();
  /** organizations whose webhook URL the batch set (what waited for it is due) */
  readonly urlsSet = new Set<string>();
  private readonly keysIssued = new Map<string, ApiKeyRow>();

  private changeOf(orgId: string, at: string): OrganizationChange {
    let change = this.changes.get(orgId);
    if (!change) {
      change = { id: orgId, updated_at: new Date(at), url_set: false, webhook_url: null, webhook_signing_secret_encrypted: null, min_withdrawal_signers: null, chains: { touched: new Set(), off: new Map() }, tokens: { touched: new Set(), off: new Map() } };
      this.changes.set(orgId, change);
    }
    change.updated_at = new Date(at);
    return change;
  }

  apply(event: OrganizationEvent): void {
    switch (event.type) {
      case 'OrganizationCreated': {
        const { orgId, name, webhookUrl, webhookSigningSecretEncrypted, minWithdrawalSigners, createdAt } = event.data;
        const at = new Date(createdAt);
        this.created.push({ id: orgId, name, webhook_url: webhookUrl, webhook_signing_secret_encrypted: webhookSigningSecretEncrypted, min_withdrawal_signers: minWithdrawalSigners, created_at: at, updated_at: at });
        // what came before the row existed changed nothing of it
        this.changes.delete(orgId);
        return;
      }
      case 'UserAdded': {
        const { userId, orgId, username, addedAt } = event.data;
        this.users.push({ id: userId, org_id: orgId, username, created_at: new Date(addedAt) });
        this.changeOf(orgId, addedAt);
        return;
      }
      case 'ApiKeyIssued': {
        const { keyId, keyDigest, orgId, userId, revokedKeyId, issuedAt } = event.data;
        if (revokedKeyId) {
          const issuedInBatch = this.keysIssued.get(revokedKeyId);
          if (issuedInBatch) issuedInBatch.revoked_at = new Date(issuedAt);
          else this.revoked.set(revokedKeyId, new Date(issuedAt));
        }
        const key: ApiKeyRow = { key_id: keyId, org_id: orgId, user_id: userId, key_digest: keyDigest, created_at: new Date(issuedAt), revoked_at: null };
        this.keys.push(key);
        this.keysIssued.set(keyId, key);
        this.changeOf(orgId, issuedAt);
        return;
      }
      case 'WebhookUrlSet': {
        const change = this.changeOf(event.data.orgId, event.data.setAt);
        change.url_set = true;
        change.webhook_url = event.data.webhookUrl;
        this.urlsSet.add(event.data.orgId);
        return;
      }
      case 'WebhookSigningSecretRotated':
        this.changeOf(event.data.orgId, event.data.rotatedAt).webhook_signing_secret_encrypted = event.data.webhookSigningSecretEncrypted;
        return;
      case 'MinWithdrawalSignersChanged':
        this.changeOf(event.data.orgId, event.data.changedAt).min_withdrawal_signers = event.data.minWithdrawalSigners;
        return;
      case 'ChainDisabled':
        switchOff(this.changeOf(event.data.orgId, event.data.disabledAt).chains, event.data.chainId);
        return;
      case 'ChainEnabled':
        switchOn(this.changeOf(event.data.orgId, event.data.enabledAt).chains, event.data.chainId);
        return;
      case 'TokenDisabled':
        switchOff(this.changeOf(event.data.orgId, event.data.disabledAt).tokens, event.data.tokenId);
        return;
      case 'TokenEnabled':
        switchOn(this.changeOf(event.data.orgId, event.data.enabledAt).tokens, event.data.tokenId);
        return;
      default: {
        const _exhaustive: never = event;
      }
    }
  }
}

/** A switch list after a batch's changes (see switchOff): the ids it did not touch, in their order, then those it left off. */
const switchedList = (column: 'disabled_chain_ids' | 'disabled_token_ids', touched: string, off: string) =>
  sql`array(select kept.id from unnest(${sql.ref(`organization.${column}`)}) with ordinality as kept (id, ordinal)
            where kept.id <> all(${sql.ref(`change.${touched}`)}) order by kept.ordinal) || ${sql.ref(`change.${off}`)}`;

/**
 * The same writes as applying each event in order, in at most five statements whatever the batch
 * holds: the new organizations, the revocations of keys issued before the batch, the new users and
 * keys (a key the batch issued and revoked goes in revoked), then one update of every organization
 * the batch changed, to its last values (rows in id order, so two batches lock them in one order).
 * Then, live, what waited for a URL the batch set is released, once per organization, after the
 * update that wrote the URL.
 */
const handleBatch = async (trx: Transaction<Database>, events: EventBody[], outbox: OutboxEffects = liveOutbox): Promise<void> => {
  const batch = new OrganizationsBatch();
  for (const event of events) batch.apply({ type: event.type, data: event.data } as OrganizationEvent);
  if (batch.created.length > 0) await sessionWrite(trx, insertRows('organizations', batch.created, ORGANIZATION_COLUMNS));
  if (batch.revoked.size > 0) {
    await sessionWrite(
      trx,
      sql`update api_keys set revoked_at = revocation.revoked_at
          from ${jsonRows([...batch.revoked].map(([key_id, revoked_at]) => ({ key_id, revoked_at })), [['key_id', 'text'], ['revoked_at', 'timestamptz']], 'revocation')}
          where api_keys.key_id = revocation.key_id`,
    );
  }
  if (batch.users.length > 0) await sessionWrite(trx, insertRows('users', batch.users, USER_COLUMNS));
  if (batch.keys.length > 0) await sessionWrite(trx, insertRows('api_keys', batch.keys, API_KEY_COLUMNS));
  if (batch.changes.size > 0) {
    const changes = [...batch.changes.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map(changeColumnsOf);
    await sessionWrite(
      trx,
      sql`update organizations as organization
          set updated_at = change.updated_at,
              webhook_url = case when change.url_set then change.webhook_url else organization.webhook_url end,
              webhook_signing_secret_encrypted = coalesce(change.webhook_signing_secret_encrypted, organization.webhook_signing_secret_encrypted),
              min_withdrawal_signers = coalesce(change.min_withdrawal_signers, organization.min_withdrawal_signers),
              disabled_chain_ids = ${switchedList('disabled_chain_ids', 'chains_touched', 'chains_off')},
              disabled_token_ids = ${switchedList('disabled_token_ids', 'tokens_touched', 'tokens_off')}
          from ${jsonRows(changes, CHANGE_COLUMNS, 'change')}
          where organization.id = change.id`,
    );
  }
  // CONTRACT §7: what waited for a URL is sent now
  for (const orgId of batch.urlsSet) await outbox.releaseWaiting(trx, orgId);
};

/** Organizations, their users and API keys: what authentication and GET /organisation read. */
export const organizationsProjection: Projection = {
  name: ORGANIZATIONS_PROJECTION,
  filter: { categories: [streamCategories.organization] },
  tables: ['api_keys', 'users', 'organizations'],
  handle: (trx, event, outbox) => handleBatch(trx, [event], outbox),
  handleBatch,
};
