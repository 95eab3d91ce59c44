import { describe, expect, it } from 'vitest';
import { organizationDecider, type NewUser } from '../../src/domain/organization/decide.js';
import type { OrganizationEvent } from '../../src/domain/organization/events.js';
import { NOW, specFor } from '../support/given-when-then.js';

const given = specFor(organizationDecider);
const at = NOW.toISOString();
const user = (n: number): NewUser => ({ userId: `u${n}`, username: `user${n}`, passwordHash: `hash${n}`, totpSeedEncrypted: `seed${n}` });

const created = (signers = 1): OrganizationEvent => ({
  type: 'OrganizationCreated',
  data: { orgId: 'o1', name: 'Acme', minWithdrawalSigners: signers, webhookUrl: null, webhookSigningSecretEncrypted: 'v1.s', createdAt: at },
});
const added = (n: number): OrganizationEvent => ({ type: 'UserAdded', data: { orgId: 'o1', ...user(n), addedAt: at } });
const keyIssued = (keyId: string, userId: string, revokedKeyId: string | null = null): OrganizationEvent => ({
  type: 'ApiKeyIssued',
  data: { orgId: 'o1', keyId, keyDigest: `d-${keyId}`, userId, revokedKeyId, issuedAt: at },
});
const existing = [created(1), added(1), added(2), keyIssued('k1', 'u1')];

describe('organization decider', () => {
  it('creates an organization with its users and a first API key owned by the first user', () => {
    given([])
      .when({
        type: 'CreateOrganization',
        orgId: 'o1',
        name: 'Acme',
        users: [user(1), user(2)],
        minWithdrawalSigners: 1,
        webhookUrl: null,
        webhookSigningSecretEncrypted: 'v1.s',
        apiKey: { keyId: 'k1', keyDigest: 'd-k1' },
      })
      .then([created(1), added(1), added(2), keyIssued('k1', 'u1')]);
  });

  it('refuses more required signers than users at creation', () => {
    given([])
      .when({
        type: 'CreateOrganization',
        orgId: 'o1',
        name: 'Acme',
        users: [user(1)],
        minWithdrawalSigners: 2,
        webhookUrl: null,
        webhookSigningSecretEncrypted: 'v1.s',
        apiKey: { keyId: 'k1', keyDigest: 'd' },
      })
      .thenThrows('INVALID_MIN_SIGNERS', { minWithdrawalSigners: 2, signers: 1 });
  });

  it('refuses a username given twice at creation, whatever its case', () => {
    given([])
      .when({
        type: 'CreateOrganization',
        orgId: 'o1',
        name: 'Acme',
        users: [user(1), { ...user(2), username: 'USER1' }],
        minWithdrawalSigners: 1,
        webhookUrl: null,
        webhookSigningSecretEncrypted: 'v1.s',
        apiKey: { keyId: 'k1', keyDigest: 'd' },
      })
      .thenThrows('DUPLICATE_USERNAME');
  });

  it('adds a user', () => {
    given(existing).when({ type: 'AddUser', user: user(3) }).then([added(3)]);
  });

  it('rotates the API key, naming the key it revokes', () => {
    given(existing).when({ type: 'RotateApiKey', keyId: 'k2', keyDigest: 'd-k2', userId: 'u2' }).then([keyIssued('k2', 'u2', 'k1')]);
  });

  it('refuses a key rotation by someone outside the organization', () => {
    given(existing).when({ type: 'RotateApiKey', keyId: 'k2', keyDigest: 'd', userId: 'stranger' }).thenThrows('FORBIDDEN');
  });

  it('sets the webhook URL and rotates the signing secret', () => {
    given(existing)
      .when({ type: 'SetWebhookUrl', webhookUrl: 'https://hooks.example.com/x' })
      .then([{ type: 'WebhookUrlSet', data: { orgId: 'o1', webhookUrl: 'https://hooks.example.com/x', setAt: at } }]);
    given(existing)
      .when({ type: 'RotateWebhookSigningSecret', webhookSigningSecretEncrypted: 'v1.new' })
      .then([{ type: 'WebhookSigningSecretRotated', data: { orgId: 'o1', webhookSigningSecretEncrypted: 'v1.new', rotatedAt: at } }]);
  });

  const byKey = { credential: 'api-key', changedBy: 'u1' } as const;
  const byPerson = { credential: 'person', changedBy: 'u2' } as const;

  it('changes the minimum signers within 1..number of users, naming who and with which credential', () => {
    given(existing)
      .when({ type: 'ChangeMinWithdrawalSigners', minWithdrawalSigners: 2, ...byKey })
      .then([{ type: 'MinWithdrawalSignersChanged', data: { orgId: 'o1', minWithdrawalSigners: 2, ...byKey, changedAt: at } }]);
    for (const invalid of [0, 3, 1.5, -1, Number.NaN]) {
      given(existing).when({ type: 'ChangeMinWithdrawalSigners', minWithdrawalSigners: invalid, ...byPerson }).thenThrows('INVALID_MIN_SIGNERS');
    }
  });

  it('an API key may raise the threshold or keep it, never lower it; a person may lower it', () => {
    const atTwo = [...existing, { type: 'MinWithdrawalSignersChanged' as const, data: { orgId: 'o1', minWithdrawalSigners: 2, changedAt: at } }];
    given(atTwo).when({ type: 'ChangeMinWithdrawalSigners', minWithdrawalSigners: 1, ...byKey }).thenThrows('FORBIDDEN');
    given(atTwo).when({ type: 'ChangeMinWithdrawalSigners', minWithdrawalSigners: 1, credential: 'system', changedBy: 'cli' }).thenThrows('FORBIDDEN');
    given(atTwo)
      .when({ type: 'ChangeMinWithdrawalSigners', minWithdrawalSigners: 2, ...byKey })
      .then([{ type: 'MinWithdrawalSignersChanged', data: { orgId: 'o1', minWithdrawalSigners: 2, ...byKey, changedAt: at } }]);
    given(atTwo)
      .when({ type: 'ChangeMinWithdrawalSigners', minWithdrawalSigners: 1, ...byPerson })
      .then([{ type: 'MinWithdrawalSignersChanged', data: { orgId: 'o1', minWithdrawalSigners: 1, ...byPerson, changedAt: at } }]);
  });

  it('lets a later user count as a signer', () => {
    given([...existing, added(3)])
      .when({ type: 'ChangeMinWithdrawalSigners', minWithdrawalSigners: 3, ...byKey })
      .then([{ type: 'MinWithdrawalSignersChanged', data: { orgId: 'o1', minWithdrawalSigners: 3, ...byKey, changedAt: at } }]);
  });

  it('refuses commands on an organization that does not exist', () => {
    given([]).when({ type: 'AddUser', user: user(1) }).thenThrows('NOT_FOUND');
    given([]).when({ type: 'SetWebhookUrl', webhookUrl: 'https://x.example' }).thenThrows('NOT_FOUND');
  });

  it('folds the state an API key check relies on', () => {
    const state = [...existing, keyIssued('k2', 'u2', 'k1')].reduce(organizationDecider.evolve, organizationDecider.initialState);
    expect(state).toMatchObject({ status: 'Active', apiKey: { keyId: 'k2', userId: 'u2' }, users: [{ userId: 'u1' }, { userId: 'u2' }] });
  });
});
