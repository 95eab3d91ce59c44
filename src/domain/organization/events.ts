import type { DomainEvent } from '../decider.js';

/**
 * Organization events. Secrets appear only sealed (`…Encrypted`) or as one-way digests
 * (`passwordHash`, `keyDigest`); the audit export drops those fields (SECRET_FIELDS).
 */
export type OrganizationEvent =
  | DomainEvent<
      'OrganizationCreated',
      {
        orgId: string;
        name: string;
        minWithdrawalSigners: number;
        webhookUrl: string | null;
        webhookSigningSecretEncrypted: string;
        createdAt: string;
      }
    >
  | DomainEvent<'UserAdded', { orgId: string; userId: string; username: string; passwordHash: string; totpSeedEncrypted: string; addedAt: string }>
  | DomainEvent<'ApiKeyIssued', { orgId: string; keyId: string; keyDigest: string; userId: string; revokedKeyId: string | null; issuedAt: string }>
  | DomainEvent<'WebhookUrlSet', { orgId: string; webhookUrl: string; setAt: string }>
  | DomainEvent<'WebhookSigningSecretRotated', { orgId: string; webhookSigningSecretEncrypted: string; rotatedAt: string }>
  | DomainEvent<'MinWithdrawalSignersChanged', { orgId: string; minWithdrawalSigners: number; changedAt: string }>;

export type OrganizationEventType = OrganizationEvent['type'];

/** Fields that hold secrets (sealed or hashed): never exported, never logged. */
export const SECRET_FIELDS: Partial<Record<OrganizationEventType, string[]>> = {
  OrganizationCreated: ['webhookSigningSecretEncrypted'],
  UserAdded: ['passwordHash', 'totpSeedEncrypted'],
  ApiKeyIssued: ['keyDigest'],
  WebhookSigningSecretRotated: ['webhookSigningSecretEncrypted'],
};
