import type { OrganizationEvent } from './events.js';

export interface OrganizationUser {
  userId: string;
  username: string;
  passwordHash: string;
  totpSeedEncrypted: string;
}

export type Organization =
  | { status: 'None' }
  | {
      status: 'Active';
      orgId: string;
      name: string;
      users: OrganizationUser[];
      apiKey: { keyId: string; keyDigest: string; userId: string } | null;
      webhookUrl: string | null;
      webhookSigningSecretEncrypted: string;
      minWithdrawalSigners: number;
      /** chains and tokens this organization switched off (CAIP-2 / CAIP-19 ids); everything else is on */
      disabledChainIds: string[];
      disabledTokenIds: string[];
      createdAt: string;
      updatedAt: string;
    };

export type ActiveOrganization = Extract<Organization, { status: 'Active' }>;

export const initialOrganization: Organization = { status: 'None' };

export const evolveOrganization = (state: Organization, event: OrganizationEvent): Organization => {
  switch (event.type) {
    case 'OrganizationCreated': {
      const { orgId, name, minWithdrawalSigners, webhookUrl, webhookSigningSecretEncrypted, createdAt } = event.data;
      return {
        status: 'Active',
        orgId,
        name,
        users: [],
        apiKey: null,
        webhookUrl,
        webhookSigningSecretEncrypted,
        minWithdrawalSigners,
        disabledChainIds: [],
        disabledTokenIds: [],
        createdAt,
        updatedAt: createdAt,
      };
    }
    case 'UserAdded': {
      if (state.status !== 'Active') return state;
      const { userId, username, passwordHash, totpSeedEncrypted, addedAt } = event.data;
      return { ...state, users: [...state.users, { userId, username, passwordHash, totpSeedEncrypted }], updatedAt: addedAt };
    }
    case 'ApiKeyIssued': {
      if (state.status !== 'Active') return state;
      const { keyId, keyDigest, userId, issuedAt } = event.data;
      return { ...state, apiKey: { keyId, keyDigest, userId }, updatedAt: issuedAt };
    }
    case 'WebhookUrlSet':
      return state.status === 'Active' ? { ...state, webhookUrl: event.data.webhookUrl, updatedAt: event.data.setAt } : state;
    case 'WebhookSigningSecretRotated':
      return state.status === 'Active'
        ? { ...state, webhookSigningSecretEncrypted: event.data.webhookSigningSecretEncrypted, updatedAt: event.data.rotatedAt }
        : state;
    case 'MinWithdrawalSignersChanged':
      return state.status === 'Active'
        ? { ...state, minWithdrawalSigners: event.data.minWithdrawalSigners, updatedAt: event.data.changedAt }
        : state;
    case 'ChainDisabled':
      return state.status === 'Active'
        ? { ...state, disabledChainIds: [...state.disabledChainIds, event.data.chainId], updatedAt: event.data.disabledAt }
        : state;
    case 'ChainEnabled':
      return state.status === 'Active'
        ? { ...state, disabledChainIds: state.disabledChainIds.filter((id) => id !== event.data.chainId), updatedAt: event.data.enabledAt }
        : state;
    case 'TokenDisabled':
      return state.status === 'Active'
        ? { ...state, disabledTokenIds: [...state.disabledTokenIds, event.data.tokenId], updatedAt: event.data.disabledAt }
        : state;
    case 'TokenEnabled':
      return state.status === 'Active'
        ? { ...state, disabledTokenIds: state.disabledTokenIds.filter((id) => id !== event.data.tokenId), updatedAt: event.data.enabledAt }
        : state;
    default: {
      const _exhaustive: never = event;
      return state;
    }
  }
};
