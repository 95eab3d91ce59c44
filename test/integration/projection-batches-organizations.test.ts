import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import type { OrganizationEvent } from '../../src/domain/organization/events.js';
import { streams } from '../../src/domain/streams.js';
import { eventStoreMigrations } from '../../src/eventstore/postgres/migrations/index.js';
import { createPostgresEventStore } from '../../src/eventstore/postgres/postgres-event-store.js';
import type { EventStore } from '../../src/eventstore/port.js';
import { createLogger } from '../../src/log.js';
import { rebuildProjection } from '../../src/projections/checkpoint.js';
import { readModelMigrations } from '../../src/projections/migrations/index.js';
import { organizationsProjection } from '../../src/projections/organizations.js';
import { ProjectionRunner } from '../../src/projections/runner.js';
import { enqueueWebhooks } from '../../src/webhooks/outbox.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

const logger = createLogger('silent');
const [orgA, orgB, orgC] = ['org_switchA', 'org_switchB', 'org_waitingC'];
const at = (second: number) => `2026-11-22T12:00:${String(second).padStart(2, '0')}.000Z`;

/**
 * Two organizations' histories, interleaved: users, keys rotated (each revoking the one before, in
 * the same batch or an earlier one), chains and tokens switched off, on and off again (the list
 * keeps each id once, the last switched off last), a secret rotated, the signers changed, a URL
 * set (what waited for it is released); a third organization that never sets one.
 */
const history: [orgId: string, event: OrganizationEvent][] = [
  [orgA, { type: 'OrganizationCreated', data: { orgId: orgA, name: 'A', minWithdrawalSigners: 1, webhookUrl: null, webhookSigningSecretEncrypted: 'sealed-a1', createdAt: at(0) } }],
  [orgB, { type: 'OrganizationCreated', data: { orgId: orgB, name: 'B', minWithdrawalSigners: 2, webhookUrl: 'https://b.example/hook', webhookSigningSecretEncrypted: 'sealed-b1', createdAt: at(1) } }],
  [orgC, { type: 'OrganizationCreated', data: { orgId: orgC, name: 'C', minWithdrawalSigners: 1, webhookUrl: null, webhookSigningSecretEncrypted: 'sealed-c1', createdAt: at(1) } }],
  [orgA, { type: 'UserAdded', data: { orgId: orgA, userId: 'usr_a1', username: 'alice', passwordHash: 'h', totpSeedEncrypted: 's', addedAt: at(2) } }],
  [orgA, { type: 'ApiKeyIssued', data: { orgId: orgA, keyId: 'key_a1', keyDigest: 'd1', userId: 'usr_a1', revokedKeyId: null, issuedAt: at(3) } }],
  [orgB, { type: 'UserAdded', data: { orgId: orgB, userId: 'usr_b1', username: 'bob', passwordHash: 'h', totpSeedEncrypted: 's', addedAt: at(4) } }],
  [orgA, { type: 'ChainDisabled', data: { orgId: orgA, chainId: 'eip155:1', disabledAt: at(5) } }],
  [orgB, { type: 'ApiKeyIssued', data: { orgId: orgB, keyId: 'key_b1', keyDigest: 'd2', userId: 'usr_b1', revokedKeyId: null, issuedAt: at(6) } }],
  [orgA, { type: 'ChainDisabled', data: { orgId: orgA, chainId: 'eip155:137', disabledAt: at(7) } }],
  [orgA, { type: 'TokenDisabled', data: { orgId: orgA, tokenId: 'eip155:1/erc20:0xdac17f958d2ee523a2206206994597c13d831ec7', disabledAt: at(8) } }],
  [orgA, { type: 'ChainEnabled', data: { orgId: orgA, chainId: 'eip155:1', enabledAt: at(9) } }],
  [orgB, { type: 'ChainDisabled', data: { orgId: orgB, chainId: 'tron:mainnet', disabledAt: at(10) } }],
  [orgA, { type: 'ChainDisabled', data: { orgId: orgA, chainId: 'eip155:1', disabledAt: at(11) } }],
  [orgA, { type: 'ApiKeyIssued', data: { orgId: orgA, keyId: 'key_a2', keyDigest: 'd3', userId: 'usr_a1', revokedKeyId: 'key_a1', issuedAt: at(12) } }],
  [orgA, { type: 'WebhookSigningSecretRotated', data: { orgId: orgA, webhookSigningSecretEncrypted: 'sealed-a2', rotatedAt: at(13) } }],
  [orgB, { type: 'MinWithdrawalSignersChanged', data: { orgId: orgB, minWithdrawalSigners: 1, changedAt: at(14) } }],
  [orgA, { type: 'MinWithdrawalSignersChanged', data: { orgId: orgA, minWithdrawalSigners: 2, changedAt: at(15) } }],
  [orgA, { type: 'UserAdded', data: { orgId: orgA, userId: 'usr_a2', username: 'carol', passwordHash: 'h', totpSeedEncrypted: 's', addedAt: at(16) } }],
  [orgA, { type: 'ApiKeyIssued', data: { orgId: orgA, keyId: 'key_a3', keyDigest: 'd4', userId: 'usr_a2', revokedKeyId: 'key_a2', issuedAt: at(17) } }],
  [orgA, { type: 'WebhookUrlSet', data: { orgId: orgA, webhookUrl: 'https://a.example/hook', setAt: at(18) } }],
  [orgB, { type: 'ChainEnabled', data: { orgId: orgB, chainId: 'tron:mainnet', enabledAt: at(19) } }],
  [orgA, { type: 'TokenEnabled', data: { orgId: orgA, tokenId: 'eip155:1/erc20:0xdac17f958d2ee523a2206206994597c13d831ec7', enabledAt: at(20) } }],
  [orgA, { type: 'ChainDisabled', data: { orgId: orgA, chainId: 'eip155:137', disabledAt: at(21) } }],
  [orgB, { type: 'WebhookSigningSecretRotated', data: { orgId: orgB, webhookSigningSecretEncrypted: 'sealed-b2', rotatedAt: at(22) } }],
  [orgA, { type: 'TokenDisabled', data: { orgId: orgA, tokenId: 'eip155:1/slip44:60', disabledAt: at(23) } }],
];

/** Everything the projection wrote, and which deliveries still wait for a URL. */
const snapshot = async (db: Kysely<Database>) => ({
  organizations: await db.selectFrom('organizations').selectAll().orderBy('id').execute(),
  users: await db.selectFrom('users').selectAll().orderBy('id').execute(),
  apiKeys: await db.selectFrom('api_keys').selectAll().orderBy('key_id').execute(),
  waiting: await db
    .selectFrom('webhook_deliveries')
    .select(['org_id', 'dedupe_key', sql<boolean>`next_attempt_at = 'infinity'`.as('waits')])
    .orderBy('dedupe_key')
    .execute(),
});

describe('projection batches: organizations', () => {
  let eventsDatabase: TestDatabase;
  let store: EventStore;
  const readModels: TestDatabase[] = [];

  /** a read model with one delivery of A and one of C waiting for a URL (written before any organization row) */
  const readModelWithWaitingDeliveries = async (name: string) => {
    const database = await createTestDatabase(name);
    readModels.push(database);
    await migrateToLatest(database.pool, readModelMigrations);
    const db = createDatabase(database.pool);
    await db.transaction().execute((trx) =>
      enqueueWebhooks(
        trx,
        [orgA, orgC].map((orgId) => ({ orgId, type: 'account.created', payload: { orgId }, timestamp: new Date(at(0)), dedupeKey: `${orgId}:account.created:waiting` })),
      ),
    );
    return database;
  };

  const projectedInBatchesOf = async (batchSize: number) => {
    const database = await readModelWithWaitingDeliveries('organization_batches');
    const runner = new ProjectionRunner({ projection: organizationsProjection, store, database: database.config, logger, batchSize });
    expect(await runner.catchUp()).toBe(true);
    return createDatabase(database.pool);
  };

  beforeAll(async () => {
    eventsDatabase = await createTestDatabase('organization_batch_events');
    await migrateToLatest(eventsDatabase.pool, eventStoreMigrations);
    store = createPostgresEventStore({ pool: eventsDatabase.pool, listenConfig: eventsDatabase.config, logger });
    const revisions = new Map<string, bigint>();
    for (const [orgId, { type, data }] of history) {
      const revision = revisions.get(orgId);
      await store.append(streams.organization(orgId), revision ?? 'no_stream', [{ id: randomUUID(), type, data, metadata: { actor: 'test', at: at(0) } }]);
      revisions.set(orgId, (revision ?? -1n) + 1n);
    }
  });
  afterAll(async () => {
    await store.close();
    await Promise.all([eventsDatabase, ...readModels].map((database) => database.drop()));
  });

  it('writes the rows of applying each event in turn, whatever the batch size, and a rebuild gives them again', async () => {
    const one = await snapshot(await projectedInBatchesOf(1));
    expect(one.organizations).toMatchObject([
      {
        id: orgA,
        webhook_url: 'https://a.example/hook',
        webhook_signing_secret_encrypted: 'sealed-a2',
        min_withdrawal_signers: 2,
        disabled_chain_ids: ['eip155:1', 'eip155:137'],
        disabled_token_ids: ['eip155:1/slip44:60'],
        created_at: new Date(at(0)),
        updated_at: new Date(at(23)),
      },
      { id: orgB, webhook_url: 'https://b.example/hook', webhook_signing_secret_encrypted: 'sealed-b2', min_withdrawal_signers: 1, disabled_chain_ids: [], disabled_token_ids: [], updated_at: new Date(at(22)) },
      { id: orgC, webhook_url: null, disabled_chain_ids: [], updated_at: new Date(at(1)) },
    ]);
    expect(one.users.map((user) => [user.id, user.org_id, user.username])).toEqual([
      ['usr_a1', orgA, 'alice'],
      ['usr_a2', orgA, 'carol'],
      ['usr_b1', orgB, 'bob'],
    ]);
    // each rotation revoked the key before it, at the new key's time
    expect(one.apiKeys.map((key) => [key.key_id, key.revoked_at])).toEqual([
      ['key_a1', new Date(at(12))],
      ['key_a2', new Date(at(17))],
      ['key_a3', null],
      ['key_b1', null],
    ]);
    expect(one.waiting.map((row) => [row.org_id, row.waits])).toEqual([
      [orgA, false],
      [orgC, true],
    ]);

    for (const size of [2, 3, 5, 7, 10_000]) expect(await snapshot(await projectedInBatchesOf(size))).toEqual(one);

    // a rebuild over the built tables, and one onto an empty read model: the same rows
    const built = await projectedInBatchesOf(4);
    await rebuildProjection(built, store, organizationsProjection);
    expect(await snapshot(built)).toEqual(one);
    const empty = createDatabase((await readModelWithWaitingDeliveries('organization_batches_rebuild')).pool);
    await rebuildProjection(empty, store, organizationsProjection);
    expect(await snapshot(empty)).toEqual(one);
  });
});
