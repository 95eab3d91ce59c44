import { randomUUID } from 'node:crypto';
import { organizationWalletAddresses, organizationWalletSpace } from '../../../src/application/organization-wallets.js';
import type { ChainDefinition } from '../../../src/catalog/chain.js';
import { accountDecider, type Account } from '../../../src/domain/account/account.js';
import { organizationDecider } from '../../../src/domain/organization/decide.js';
import { streams } from '../../../src/domain/streams.js';
import { usernameClaimed } from '../../../src/domain/username-claim.js';
import { generateApiKey, generateWebhookSigningSecret } from '../../../src/security/api-keys.js';
import { encryptSecret, secretPurpose } from '../../../src/security/secret-box.js';
import { generateTotpSeed } from '../../../src/security/totp.js';
import type { HistoryContext, Steps } from './context.js';

export interface HistoryUser {
  userId: string;
  username: string;
}

export type OpenAccount = Extract<Account, { status: 'Created' }>;
export interface OrganizationWalletsOnChain {
  index: number;
  settlementAddress: string;
  gasAddress: string | null;
}

/** What an organization's later steps need to know of it. */
export interface HistoryOrganization {
  orgId: string;
  users: HistoryUser[];
  minWithdrawalSigners: number;
  /** per key space: the organization's wallet index (all EVM chains share one) */
  walletIndexes: Map<string, number>;
  /** per chain: the organization's wallet index and addresses */
  wallets: Map<string, OrganizationWalletsOnChain>;
  /** per chain, then depositor: the deposit accounts handed out */
  accounts: Map<string, Map<string, OpenAccount>>;
  /** per user: the last TOTP time step accepted (a code is accepted once) */
  totpSteps: Map<string, number>;
}

/** the owner name the service gives an organization's own index in a key space */
const ORGANIZATION_OWNER = '(organization)';

/**
 * `ledgergate bootstrap` of one organization with two users, decided as
 * src/application/organizations.ts decides it (the username claims and the organization's stream
 * in one append) and sealed with the service's own keys. No webhook URL: its deliveries wait
 * unattempted (CONTRACT §7), so a history of a million events does not have the dispatcher post
 * to nowhere at start.
 */
export function* bootstrapOrganization(context: HistoryContext, ordinal: number, runId: string): Steps<HistoryOrganization> {
  const now = context.clock.now;
  const orgId = randomUUID();
  const users = [0, 1].map((n) => ({ userId: randomUUID(), username: `history-${runId}-${ordinal}-${n}` }));
  const minWithdrawalSigners = ordinal % 2 === 0 ? 1 : 2;
  const { apiKey, keyId } = generateApiKey();
  const { encryptionKey } = context.keyring;
  const events = organizationDecider.decide(
    {
      type: 'CreateOrganization',
      orgId,
      name: `History ${ordinal}`,
      users: users.map((user) => ({ ...user, passwordHash: context.passwordHash, totpSeedEncrypted: encryptSecret(encryptionKey, generateTotpSeed(), secretPurpose.totpSeed(user.userId)) })),
      minWithdrawalSigners,
      webhookUrl: null,
      webhookSigningSecretEncrypted: encryptSecret(encryptionKey, generateWebhookSigningSecret(), secretPurpose.webhookSigningSecret(orgId)),
      apiKey: { keyId, keyDigest: context.keyring.apiKeyDigest(apiKey) },
    },
    organizationDecider.initialState,
    { now },
  );
  yield {
    metadata: { actor: 'cli', orgId },
    appends: [
      ...users.map((user) => context.book.append(streams.usernameClaim(user.username), [usernameClaimed(user.username, user.userId, orgId, now)])),
      context.book.append(streams.organization(orgId), events),
    ],
  };
  return { orgId, users, minWithdrawalSigners, walletIndexes: new Map(), wallets: new Map(), accounts: new Map(), totpSteps: new Map() };
}

/** The organization's settlement and gas wallets on the chain, allocated on first use as the sweeper and the processor do. */
export function* walletsOn(context: HistoryContext, organization: HistoryOrganization, chain: ChainDefinition, actor: string): Steps<OrganizationWalletsOnChain> {
  const known = organization.wallets.get(chain.id);
  if (known) return known;
  let index = organization.walletIndexes.get(chain.keySpace);
  if (index === undefined) {
    const allocated = context.book.allocate(organizationWalletSpace(chain.keySpace), organization.orgId, ORGANIZATION_OWNER, context.clock.now);
    yield { metadata: { actor, orgId: organization.orgId }, appends: allocated.appends };
    index = allocated.index;
    organization.walletIndexes.set(chain.keySpace, index);
  }
  const wallets = { index, ...organizationWalletAddresses(context.signer, chain, index) };
  organization.wallets.set(chain.id, wallets);
  return wallets;
}

/**
 * The depositor's account on the chain, created on first request as GET /payments/deposit-address
 * creates it (an API key's request): the key space's next index and the account, in one append.
 * Chains without destination tags only (the history has no XRP).
 */
export function* depositAccount(context: HistoryContext, organization: HistoryOrganization, chain: ChainDefinition, externalUserId: string): Steps<OpenAccount> {
  const ofChain = organization.accounts.get(chain.id) ?? new Map<string, OpenAccount>();
  organization.accounts.set(chain.id, ofChain);
  const known = ofChain.get(externalUserId);
  if (known) return known;
  const now = context.clock.now;
  const space = context.addresses.keySpace(chain.id);
  const { index, appends } = context.book.allocate(space, organization.orgId, externalUserId, now);
  const events = accountDecider.decide(
    {
      type: 'CreateAccount',
      orgId: organization.orgId,
      chainId: chain.id,
      externalUserId,
      orgDepositAccountId: randomUUID(),
      properties: { address: context.addresses.addressAt(chain.id, index) },
      derivation: { space, index },
    },
    accountDecider.initialState,
    { now },
  );
  const [owner] = organization.users;
  yield {
    metadata: { actor: owner!.userId, orgId: organization.orgId, credential: 'api-key', username: owner!.username },
    appends: [...appends, context.book.append(streams.account(organization.orgId, chain.id, externalUserId), events)],
  };
  const account = events.reduce(accountDecider.evolve, accountDecider.initialState) as OpenAccount;
  ofChain.set(externalUserId, account);
  return account;
}
