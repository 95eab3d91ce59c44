import { DomainError } from '../errors.js';
import { organizationDecider } from '../domain/organization/decide.js';
import type { OrganizationUser } from '../domain/organization/organization.js';
import { streams } from '../domain/streams.js';
import { totpUseDecider } from '../domain/totp-use/totp-use.js';
import type { UsernameClaimEvent } from '../domain/username-claim.js';
import { issueAccessToken } from '../security/access-tokens.js';
import { DUMMY_PASSWORD_HASH, verifyPassword } from '../security/passwords.js';
import { decryptSecret, secretPurpose } from '../security/secret-box.js';
import { matchingTimeStep } from '../security/totp.js';
import { handleCommand, loadAggregate, type CommandMetadata } from './command-handler.js';
import type { OrganizationServices } from './organizations.js';

/** The user behind a login name, read from the event store (never a read model: it is a credential check). */
const findUser = async (services: OrganizationServices, username: string): Promise<{ user: OrganizationUser; orgId: string } | null> => {
  const [claim] = await services.store.readStream(streams.usernameClaim(username), { maxCount: 1 });
  if (!claim) return null;
  const { userId, orgId } = (claim.data as UsernameClaimEvent['data']);
  const { state } = await loadAggregate(services.store, streams.organization(orgId), organizationDecider);
  const user = state.status === 'Active' ? state.users.find((candidate) => candidate.userId === userId) : undefined;
  return user ? { user, orgId } : null;
};

/**
 * A TOTP code for one of the user's time steps, accepted once (the TOTP-use stream's revision makes
 * concurrent uses of one code race, and one wins). Also the step-up check of approvals.
 */
export const acceptTotpCode = async (
  services: OrganizationServices,
  user: { userId: string; totpSeedEncrypted: string },
  code: string,
  purpose: 'login' | 'approval',
  metadata: CommandMetadata,
) => {
  const seed = decryptSecret(services.keyring.encryptionKey, user.totpSeedEncrypted, secretPurpose.totpSeed(user.userId));
  const timeStep = matchingTimeStep(seed, code, services.clock());
  if (timeStep === null) throw new DomainError('INVALID_TOTP', 'The TOTP code is wrong or expired');
  await handleCommand(services, streams.totpUse(user.userId), totpUseDecider, { type: 'AcceptTotpCode', userId: user.userId, timeStep, purpose }, metadata);
};

/**
 * The refusal of a login whose username names no active user: the same code and message as a wrong
 * password (no username oracle), told apart only in process, so failures of names nobody has are
 * counted apart from real users' (login-limits.ts).
 */
export class UnknownUsername extends DomainError {
  constructor() {
    super('UNAUTHORIZED', 'Invalid username or password');
  }
}

export const login = async (
  services: OrganizationServices,
  input: { username: string; password: string; totpCode: string },
  metadata: Omit<CommandMetadata, 'actor'>,
) => {
  const found = await findUser(services, input.username);
  // the same slow hash runs whether or not the user exists: no timing oracle for usernames
  const passwordMatches = await verifyPassword(input.password, found?.user.passwordHash ?? DUMMY_PASSWORD_HASH);
  if (!found) throw new UnknownUsername();
  if (!passwordMatches) throw new DomainError('UNAUTHORIZED', 'Invalid username or password');
  const { user, orgId } = found;
  await acceptTotpCode(services, user, input.totpCode, 'login', { ...metadata, actor: user.userId, orgId });
  return { accessToken: await issueAccessToken(services.keyring.jwtKey, { userId: user.userId, orgId }, services.clock()), userId: user.userId };
};
