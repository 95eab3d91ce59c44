import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/database.js';
import { DomainError } from '../errors.js';
import { organizationDecider, type NewUser, type OrganizationCommand } from '../domain/organization/decide.js';
import { streams } from '../domain/streams.js';
import { usernameClaimed } from '../domain/username-claim.js';
import { WrongExpectedRevisionError } from '../eventstore/errors.js';
import { generateApiKey, generateWebhookSigningSecret } from '../security/api-keys.js';
import type { Keyring } from '../security/keyring.js';
import { generatePassword, hashPassword } from '../security/passwords.js';
import { encryptSecret, secretPurpose } from '../security/secret-box.js';
import { generateTotpSeed, otpauthUrl } from '../security/totp.js';
import { decideAndAppend, handleCommand, type CommandMetadata, type CommandServices, type DecidedAppend } from './command-handler.js';
import type { OrganizationStates } from './organization-states.js';
import { checkWebhookUrl } from './webhook-url.js';

export interface OrganizationServices extends CommandServices {
  db: Kysely<Database>;
  /** organizations kept in memory for the requests that read them (absent: each reads the stream) */
  organizationStates?: OrganizationStates | undefined;
  keyring: Keyring;
  isProduction: boolean;
}

export interface IssuedUser {
  id: string;
  username: string;
  password: string;
  totpSecret: string;
  otpauthUrl: string;
}

const USERNAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,62}$/;

const checkUsername = (username: string) => {
  if (!USERNAME.test(username)) {
    throw new DomainError('BAD_REQUEST', 'a username is 1-63 characters: letters, digits, and . _ @ - (not first)', { username });
  }
};

/** Generates a user's credentials: the plaintext goes back to the caller once, the rest is sealed. */
const newUser = async (keyring: Keyring, username: string): Promise<{ issued: IssuedUser; user: NewUser }> => {
  checkUsername(username);
  const id = randomUUID();
  const password = generatePassword();
  const totpSecret = generateTotpSeed();
  return {
    issued: { id, username, password, totpSecret, otpauthUrl: otpauthUrl(totpSecret, username) },
    user: {
      userId: id,
      username,
      passwordHash: await hashPassword(password),
      totpSeedEncrypted: encryptSecret(keyring.encryptionKey, totpSecret, secretPurpose.totpSeed(id)),
    },
  };
};

const claimAppend = (user: NewUser, orgId: string, at: Date): DecidedAppend => ({
  stream: streams.usernameClaim(user.username),
  expectedRevision: 'no_stream',
  events: [usernameClaimed(user.username, user.userId, orgId, at)],
});

const duplicateUsername = (error: unknown, users: NewUser[]) => {
  if (error instanceof WrongExpectedRevisionError) {
    const taken = users.find((user) => streams.usernameClaim(user.username) === error.stream);
    if (taken) return new DomainError('DUPLICATE_USERNAME', `username ${taken.username} is taken`, { username: taken.username });
  }
  return null;
};

/**
 * `ledgergate bootstrap`: an organization, its users (its signers) and an API key owned by the
 * first user, appended atomically with the claims on the usernames. The organization's stream is
 * appended last, so the result's position is that of its last event.
 */
export const bootstrapOrganization = async (
  services: OrganizationServices,
  input: { name: string; usernames: string[]; minWithdrawalSigners?: number; webhookUrl?: string | null },
  metadata: CommandMetadata,
) => {
  if (input.name.trim().length === 0 || input.name.length > 200) throw new DomainError('BAD_REQUEST', 'an organization name is 1-200 characters');
  const orgId = randomUUID();
  const webhookUrl = input.webhookUrl ? await checkWebhookUrl(input.webhookUrl, services) : null;
  const users = await Promise.all(input.usernames.map((username) => newUser(services.keyring, username)));
  const { apiKey, keyId } = generateApiKey();
  const webhookSigningSecret = generateWebhookSigningSecret();
  const command: OrganizationCommand = {
    type: 'CreateOrganization',
    orgId,
    name: input.name,
    users: users.map(({ user }) => user),
    minWithdrawalSigners: input.minWithdrawalSigners ?? 1,
    webhookUrl,
    webhookSigningSecretEncrypted: encryptSecret(services.keyring.encryptionKey, webhookSigningSecret, secretPurpose.webhookSigningSecret(orgId)),
    apiKey: { keyId, keyDigest: services.keyring.apiKeyDigest(apiKey) },
  };
  try {
    // a new stream: a conflict can only be a username already claimed, never decided again
    const { position } = await decideAndAppend(
      services,
      { ...metadata, orgId },
      async (now) => ({
        appends: [
          ...users.map(({ user }) => claimAppend(user, orgId, now)),
          { stream: streams.organization(orgId), expectedRevision: 'no_stream', events: organizationDecider.decide(command, organizationDecider.initialState, { now }) },
        ],
        result: {},
      }),
      { maxAttempts: 1 },
    );
    if (position === null) throw new Error('a new organization always has events to append');
    return {
      organization: { id: orgId, name: input.name },
      apiKey,
      webhookSigningSecret,
      users: users.map(({ issued }) => issued),
      position,
    };
  } catch (error) {
    throw duplicateUsername(error, command.users) ?? error;
  }
};

/** `ledgergate user add`: a new signer, appended atomically with the claim on its username. */
export const addUser = async (services: OrganizationServices, orgId: string, username: string, metadata: CommandMetadata) => {
  const { issued, user } = await newUser(services.keyring, username);
  const withOrg = { ...metadata, orgId };
  try {
    const { position } = await handleCommand(services, streams.organization(orgId), organizationDecider, { type: 'AddUser', user }, withOrg, (now) => [
      claimAppend(user, orgId, now),
    ]);
    return { user: issued, position: position! };
  } catch (error) {
    throw duplicateUsername(error, [user]) ?? error;
  }
};

const onOrganization = (services: OrganizationServices, orgId: string, command: OrganizationCommand, metadata: CommandMetadata) =>
  handleCommand(services, streams.organization(orgId), organizationDecider, command, { ...metadata, orgId });

export const rotateApiKey = async (services: OrganizationServices, orgId: string, userId: string, metadata: CommandMetadata) => {
  const { apiKey, keyId } = generateApiKey();
  const { position } = await onOrganization(
    services,
    orgId,
    { type: 'RotateApiKey', keyId, keyDigest: services.keyring.apiKeyDigest(apiKey), userId },
    metadata,
  );
  return { apiKey, position };
};

export const setWebhookUrl = async (services: OrganizationServices, orgId: string, webhookUrl: string, metadata: CommandMetadata) => {
  const checked = await checkWebhookUrl(webhookUrl, services);
  return onOrganization(services, orgId, { type: 'SetWebhookUrl', webhookUrl: checked }, metadata);
};

export const rotateWebhookSigningSecret = async (services: OrganizationServices, orgId: string, metadata: CommandMetadata) => {
  const webhookSigningSecret = generateWebhookSigningSecret();
  const sealed = encryptSecret(services.keyring.encryptionKey, webhookSigningSecret, secretPurpose.webhookSigningSecret(orgId));
  const { position } = await onOrganization(services, orgId, { type: 'RotateWebhookSigningSecret', webhookSigningSecretEncrypted: sealed }, metadata);
  return { webhookSigningSecret, position };
};

/** Raising the threshold works with either credential; lowering it needs a person (the decider refuses an API key). */
export const changeMinWithdrawalSigners = (services: OrganizationServices, orgId: string, minWithdrawalSigners: number, metadata: CommandMetadata) =>
  onOrganization(services, orgId, { type: 'ChangeMinWithdrawalSigners', minWithdrawalSigners, credential: metadata.credential ?? 'system', changedBy: metadata.actor }, metadata);
