import { hash } from 'node:crypto';

/**
 * Every stream name, in one place. The part before the first '-' is the stream's category, which
 * subscriptions and exports filter on, so categories never contain '-'.
 */
export const streams = {
  /** settings, users, API keys, webhook secret: guards signer counts and key rotation */
  organization: (orgId: string) => `organization-${orgId}`,
  /** the claim on a login name, unique across the service (created with no_stream) */
  usernameClaim: (username: string) => `username-${digest(canonicalUsername(username))}`,
  /** the last TOTP time step accepted for a user: a code is never accepted twice */
  totpUse: (userId: string) => `totpUse-${userId}`,
  /** a user's deposit account on one chain (created with no_stream: one per user per chain) */
  account: (orgId: string, chainId: string, externalUserId: string) => `account-${orgId}-${chainId}-${digest(externalUserId)}`,
  /** the derivation indexes handed out in one key space, in order */
  derivationCounter: (space: string) => `derivationCounter-${space}`,
  /** the index one owner holds in a key space (created with no_stream: one per owner) */
  derivationOwner: (space: string, orgId: string, owner: string) => `derivationOwner-${space}-${orgId}-${digest(owner)}`,
  /** one incoming transfer: chain + transaction + output/log index (created with no_stream: credited once) */
  deposit: (chainId: string, txHash: string, index: number) => `deposit-${chainId}-${txHash}-${index}`,
  /** an organization's balances of one token: available, pending, held (never below zero) */
  ledger: (orgId: string, tokenId: string) => `ledger-${orgId}-${tokenId}`,
  /** moving one confirmed deposit to the settlement wallet: each signed transaction is recorded before it is sent */
  sweep: (chainId: string, txHash: string, index: number) => `sweep-${chainId}-${txHash}-${index}`,
  /** one withdrawal: requested, approved, signed, broadcast, completed | failed | cancelled (SPEC §3) */
  withdrawal: (withdrawalId: string) => `withdrawal-${withdrawalId}`,
  /** the claim on a withdrawal `reference` within an organization (created with no_stream: DUPLICATE_REFERENCE) */
  withdrawalReference: (orgId: string, reference: string) => `withdrawalReference-${orgId}-${digest(reference)}`,
  /** the gas top-ups the withdrawal processor sends an EVM/Tron settlement wallet for one withdrawal (recorded before they are sent) */
  withdrawalGas: (withdrawalId: string) => `withdrawalGas-${withdrawalId}`,
  /** EVM, Tron: an organization's settlement wallet's gas buffer: top-ups sized for many withdrawals (recorded before they are sent) and each withdrawal's draw */
  gasBuffer: (chainId: string, orgId: string) => `gasBuffer-${chainId}-${orgId}`,
  /** the transaction of ours that makes a refused transaction impossible (recorded before it is sent) */
  cancellation: (chainId: string, txHash: string) => `cancellation-${chainId}-${txHash}`,
  /** Bitcoin: one transaction paying many withdrawals of an organization, and its replacements (recorded before they are sent) */
  payoutBatch: (chainId: string, batchId: string) => `payoutBatch-${chainId}-${batchId}`,
} as const;

export const streamCategories = {
  organization: 'organization',
  usernameClaim: 'username',
  totpUse: 'totpUse',
  account: 'account',
  derivationCounter: 'derivationCounter',
  derivationOwner: 'derivationOwner',
  deposit: 'deposit',
  ledger: 'ledger',
  sweep: 'sweep',
  withdrawal: 'withdrawal',
  withdrawalReference: 'withdrawalReference',
  withdrawalGas: 'withdrawalGas',
  gasBuffer: 'gasBuffer',
  cancellation: 'cancellation',
  payoutBatch: 'payoutBatch',
} as const;

/** Login names compare case-insensitively. */
export const canonicalUsername = (username: string) => username.normalize('NFKC').toLowerCase();

/** SHA-256 of the value's UTF-8 bytes, in hex (the one-shot form: no Hash object per stream name) */
const digest = (value: string) => hash('sha256', value, 'hex');
