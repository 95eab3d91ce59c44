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
  /** `changedBy` and `credential` (who, and with a person's login or an API key) on changes made since they were recorded */
  | DomainEvent<'MinWithdrawalSignersChanged', { orgId: string; minWithdrawalSigners: number; changedBy?: string; credential?: 'person' | 'api-key' | 'system'; changedAt: string }>
  /** the organization switched a chain off (its deposits, addresses and withdrawals are refused) or on again */
  | DomainEvent<'ChainDisabled', { orgId: string; chainId: string; disabledAt: string }>
  | DomainEvent<'ChainEnabled', { orgId: string; chainId: string; enabledAt: string }>
  | DomainEvent<'TokenDisabled', { orgId: string; tokenId: string; disabledAt: string }>
  | DomainEvent<'TokenEnabled', { orgId: string; tokenId: string; enabledAt: string }>;

export type OrganizationEventType = OrganizationEvent['type'];

/** Fields that hold secrets (sealed or hashed): never exported, never logged. */
export const SECRET_FIELDS: Partial<Record<OrganizationEventType, string[]>> = {
  OrganizationCreated: ['webhookSigningSecretEncrypted'],
  UserAdded: ['passwordHash', 'totpSeedEncrypted'],
  ApiKeyIssued: ['keyDigest'],
  WebhookSigningSecretRotated: ['webhookSigningSecretEncrypted'],
};
