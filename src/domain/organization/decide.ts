import { requireKnownToken, requireSupportedChain } from '../../catalog/caip.js';
import type { DecideContext, Decider } from '../decider.js';
import { DomainError } from '../../errors.js';
import type { OrganizationEvent } from './events.js';
import { evolveOrganization, initialOrganization, type ActiveOrganization, type Organization } from './organization.js';

export interface NewUser {
  userId: string;
  username: string;
  passwordHash: string;
  totpSeedEncrypted: string;
}

export type OrganizationCommand =
  | {
      type: 'CreateOrganization';
      orgId: string;
      name: string;
      users: NewUser[];
      minWithdrawalSigners: number;
      webhookUrl: string | null;
      webhookSigningSecretEncrypted: string;
      /** the first API key, owned by the first user */
      apiKey: { keyId: string; keyDigest: string };
    }
  | { type: 'AddUser'; user: NewUser }
  | { type: 'RotateApiKey'; keyId: string; keyDigest: string; userId: string }
  | { type: 'SetWebhookUrl'; webhookUrl: string }
  | { type: 'RotateWebhookSigningSecret'; webhookSigningSecretEncrypted: string }
  | { type: 'ChangeMinWithdrawalSigners'; minWithdrawalSigners: number; credential: 'person' | 'api-key' | 'system'; changedBy: string }
  /** switching a chain or token off or on again; asking for the state it is already in changes nothing */
  | { type: 'DisableChain'; chainId: string }
  | { type: 'EnableChain'; chainId: string }
  | { type: 'DisableToken'; tokenId: string }
  | { type: 'EnableToken'; tokenId: string };

const invalidMinSigners = (value: number, users: number) =>
  new DomainError('INVALID_MIN_SIGNERS', `minWithdrawalSigners must be an integer between 1 and ${users} (the number of signers)`, {
    minWithdrawalSigners: value,
    signers: users,
  });

const checkMinSigners = (value: number, users: number) => {
  if (!Number.isInteger(value) || value < 1 || value > users) throw invalidMinSigners(value, users);
};

const active = (state: Organization): ActiveOrganization => {
  if (state.status !== 'Active') throw new DomainError('NOT_FOUND', 'No such organization');
  return state;
};

const userAdded = (orgId: string, user: NewUser, at: string): OrganizationEvent => ({
  type: 'UserAdded',
  data: { orgId, ...user, addedAt: at },
});

export const decideOrganization = (command: OrganizationCommand, state: Organization, { now }: DecideContext): OrganizationEvent[] => {
  const at = now.toISOString();
  switch (command.type) {
    case 'CreateOrganization': {
      if (state.status !== 'None') throw new DomainError('CONFLICT', `organization ${command.orgId} already exists`);
      const [owner] = command.users;
      if (!owner) throw new DomainError('BAD_REQUEST', 'an organization needs at least one user');
      if (new Set(command.users.map((user) => user.username.toLowerCase())).size !== command.users.length) {
        throw new DomainError('DUPLICATE_USERNAME', 'a username is given twice');
      }
      checkMinSigners(command.minWithdrawalSigners, command.users.length);
      return [
        {
          type: 'OrganizationCreated',
          data: {
            orgId: command.orgId,
            name: command.name,
            minWithdrawalSigners: command.minWithdrawalSigners,
            webhookUrl: command.webhookUrl,
            webhookSigningSecretEncrypted: command.webhookSigningSecretEncrypted,
            createdAt: at,
          },
        },
        ...command.users.map((user) => userAdded(command.orgId, user, at)),
        {
          type: 'ApiKeyIssued',
          data: { orgId: command.orgId, ...command.apiKey, userId: owner.userId, revokedKeyId: null, issuedAt: at },
        },
      ];
    }
    case 'AddUser': {
      const organization = active(state);
      if (organization.users.some((user) => user.username.toLowerCase() === command.user.username.toLowerCase())) {
        throw new DomainError('DUPLICATE_USERNAME', `username ${command.user.username} is taken`);
      }
      return [userAdded(organization.orgId, command.user, at)];
    }
    case 'RotateApiKey': {
      const organization = active(state);
      if (!organization.users.some((user) => user.userId === command.userId)) throw new DomainError('FORBIDDEN', 'not a user of this organization');
      return [
        {
          type: 'ApiKeyIssued',
          data: {
            orgId: organization.orgId,
            keyId: command.keyId,
            keyDigest: command.keyDigest,
            userId: command.userId,
            revokedKeyId: organization.apiKey?.keyId ?? null,
            issuedAt: at,
          },
        },
      ];
    }
    case 'SetWebhookUrl': {
      const organization = active(state);
      return [{ type: 'WebhookUrlSet', data: { orgId: organization.orgId, webhookUrl: command.webhookUrl, setAt: at } }];
    }
    case 'RotateWebhookSigningSecret': {
      const organization = active(state);
      return [
        {
          type: 'WebhookSigningSecretRotated',
          data: { orgId: organization.orgId, webhookSigningSecretEncrypted: command.webhookSigningSecretEncrypted, rotatedAt: at },
        },
      ];
    }
    case 'ChangeMinWithdrawalSigners': {
      const organization = active(state);
      checkMinSigners(command.minWithdrawalSigners, organization.users.length);
      // an API key lives on a server and is the credential that leaks: it must never switch approvals off
      if (command.minWithdrawalSigners < organization.minWithdrawalSigners && command.credential !== 'person') {
        throw new DomainError('FORBIDDEN', 'Lowering minWithdrawalSigners needs a person signed in (a bearer token), not an API key', {
          current: organization.minWithdrawalSigners,
          requested: command.minWithdrawalSigners,
        });
      }
      const { minWithdrawalSigners, credential, changedBy } = command;
      return [{ type: 'MinWithdrawalSignersChanged', data: { orgId: organization.orgId, minWithdrawalSigners, changedBy, credential, changedAt: at } }];
    }
    case 'DisableChain': {
      const organization = active(state);
      const { id: chainId } = requireSupportedChain(command.chainId);
      if (organization.disabledChainIds.includes(chainId)) return [];
      return [{ type: 'ChainDisabled', data: { orgId: organization.orgId, chainId, disabledAt: at } }];
    }
    case 'EnableChain': {
      const organization = active(state);
      const { id: chainId } = requireSupportedChain(command.chainId);
      if (!organization.disabledChainIds.includes(chainId)) return [];
      return [{ type: 'ChainEnabled', data: { orgId: organization.orgId, chainId, enabledAt: at } }];
    }
    case 'DisableToken': {
      const organization = active(state);
      // the catalog's id: an ERC-20 contract given in another case is the same token
      const { id: tokenId } = requireKnownToken(command.tokenId);
      if (organization.disabledTokenIds.includes(tokenId)) return [];
      return [{ type: 'TokenDisabled', data: { orgId: organization.orgId, tokenId, disabledAt: at } }];
    }
    case 'EnableToken': {
      const organization = active(state);
      const { id: tokenId } = requireKnownToken(command.tokenId);
      if (!organization.disabledTokenIds.includes(tokenId)) return [];
      return [{ type: 'TokenEnabled', data: { orgId: organization.orgId, tokenId, enabledAt: at } }];
    }
    default: {
      const _exhaustive: never = command;
      return [];
    }
  }
};

export const organizationDecider: Decider<OrganizationCommand, OrganizationEvent, Organization> = {
  initialState: initialOrganization,
  evolve: evolveOrganization,
  decide: decideOrganization,
};
