import type { Kysely } from 'kysely';
import type { ChainDefinition } from '../catalog/chain.js';
import { addressCodecs } from '../chains/families.js';
import type { ChainGateway } from '../chains/gateway.js';
import { nativeToken, type TokenDefinition } from '../catalog/tokens.js';
import { parseXrpRecipient } from '../chains/xrp/address.js';
import type { Database } from '../db/database.js';
import { DomainError } from '../errors.js';
import { BoundedMap } from '../lib/bounded-map.js';
import type { Balances } from '../domain/ledger/ledger.js';
import type { OrganizationChainWallets } from './organization-wallets.js';

/**
 * The checks of POST /withdrawals that need no stream of ours (SPEC §7.3, in the order of the
 * issue): recipient, XRP destination tag, token bounds, gas, XRP account reserve. Each is a pure function of what the
 * caller read, or one question to the chain's gateway.
 */

/** how many recipients, per process, are remembered as valid addresses of their chain */
const KNOWN_VALID_RECIPIENTS = 10_000;

/**
 * Recipients this process has found valid, by chain: whether a string is an address of a chain is
 * a pure function of the two, and an EVM checksum (keccak) costs more than the rest of the
 * request's checks together. Only a valid answer is kept, so a refusal is always decided afresh.
 */
const validRecipients = new BoundedMap<string, true>(KNOWN_VALID_RECIPIENTS);

/** INVALID_RECIPIENT_ADDRESS unless `recipient` is an address of the chain's family and network. */
export const checkRecipient = (chain: ChainDefinition, recipient: string): void => {
  const key = `${chain.id}\u0000${recipient}`;
  if (validRecipients.get(key)) return;
  if (!addressCodecs[chain.family].isValidAddress(recipient, chain.network)) {
    throw new DomainError('INVALID_RECIPIENT_ADDRESS', `${recipient} is not a valid ${chain.name} address`, { chainId: chain.id, recipient });
  }
  validRecipients.set(key, true);
};

const MAX_DESTINATION_TAG = 4_294_967_295;

/** CONTRACT §6: on XRP, `memo` is the destination tag, a decimal integer 0–4294967295. */
const destinationTagOf = (memo: string): number => {
  const tag = /^(0|[1-9][0-9]{0,9})$/.test(memo) ? Number(memo) : Number.NaN;
  if (!(tag <= MAX_DESTINATION_TAG)) {
    throw new DomainError('BAD_REQUEST', 'On XRP, memo is the destination tag: a decimal integer from 0 to 4294967295', {
      issues: [{ path: 'memo', message: 'a decimal integer from 0 to 4294967295', code: 'invalid_format' }],
    });
  }
  return tag;
};

/**
 * XRP only: the tag given as memo or carried by an X-address (both must agree), and
 * MISSING_DESTINATION_TAG when neither gives one and the account requires it (RequireDest, read from the chain).
 */
export const checkDestinationTag = async (chain: ChainDefinition, gateway: ChainGateway, recipient: string, memo: string | null): Promise<void> => {
  if (chain.family !== 'xrp') return;
  const { classicAddress, tag: addressTag } = parseXrpRecipient(recipient, chain.network);
  const memoTag = memo === null ? null : destinationTagOf(memo);
  if (memoTag !== null && addressTag !== null && memoTag !== addressTag) {
    throw new DomainError('BAD_REQUEST', `The X-address carries destination tag ${addressTag}, and memo says ${memoTag}`, {
      issues: [{ path: 'memo', message: 'differs from the X-address’s own tag', code: 'custom' }],
    });
  }
  if (memoTag === null && addressTag === null && (await gateway.requiresDestinationTag(classicAddress))) {
    throw new DomainError('MISSING_DESTINATION_TAG', `${recipient} requires a destination tag: give it as memo`, { chainId: chain.id, toAddress: recipient });
  }
};

/** The token's withdrawal bounds (CONTRACT §6, base units). */
export const checkBounds = (token: TokenDefinition, amount: bigint): void => {
  const { minimumWithdrawal, maximumWithdrawal } = token.properties;
  if (amount < BigInt(minimumWithdrawal)) {
    throw new DomainError('WITHDRAWAL_BELOW_MINIMUM', `The smallest ${token.symbol} withdrawal is ${minimumWithdrawal} base units`, {
      tokenId: token.id,
      amount: amount.toString(),
      minimumWithdrawal,
    });
  }
  if (amount > BigInt(maximumWithdrawal)) {
    throw new DomainError('WITHDRAWAL_ABOVE_MAXIMUM', `The largest ${token.symbol} withdrawal is ${maximumWithdrawal} base units`, {
      tokenId: token.id,
      amount: amount.toString(),
      maximumWithdrawal,
    });
  }
};

/** how old an answer of the gas wallet's balance may be for a withdrawal it covers to be taken */
export const RECENT_GAS_BALANCE_MS = 1_000;

/**
 * EVM and Tron: the organization's gas wallet pays the network fee of a withdrawal, through the
 * settlement wallet's gas buffer where there is one; with less native currency in both together
 * than one transfer of this asset costs, it would only fail later. The gas wallet's balance may be
 * an answer up to RECENT_GAS_BALANCE_MS old when it covers the fee (the check only spares a
 * withdrawal that would wait for gas; the processor checks again before it signs); a refusal is
 * never decided on it: the balance is read again first. `buffered` (the buffer's account) is read
 * only when the gas wallet alone falls short.
 */
export const checkGas = async (
  chain: ChainDefinition,
  token: TokenDefinition,
  gateway: ChainGateway,
  wallets: OrganizationChainWallets,
  recipient: string,
  amount: bigint,
  buffered: () => Promise<bigint> = async () => 0n,
): Promise<void> => {
  if (wallets.gasAddress === null) return;
  const asset = token.kind === 'native' ? 'native' : token.address;
  const [recentBalance, estimate] = await Promise.all([
    gateway.balance(wallets.gasAddress, 'native', { recentMs: RECENT_GAS_BALANCE_MS }),
    gateway.estimateFee({ from: wallets.settlementAddress, to: recipient, asset, amount }),
  ]);
  if (recentBalance >= estimate.fee) return;
  const gasWalletBalance = await gateway.balance(wallets.gasAddress, 'native');
  if (gasWalletBalance < estimate.fee && gasWalletBalance + (await buffered()) < estimate.fee) {
    throw new DomainError('INSUFFICIENT_GAS', `The ${chain.name} gas wallet ${wallets.gasAddress} cannot pay this withdrawal’s fee: fund it with ${chain.properties.nativeCurrency}`, {
      chainId: chain.id,
      gasWalletBalance: gasWalletBalance.toString(),
      estimatedGasNeeded: estimate.fee.toString(),
      nativeToken: nativeToken(chain.id).symbol,
    });
  }
};

/**
 * XRP: the organization's address (its deposit accounts share it, users told apart by tag) pays the
 * withdrawal and its fee from what it holds above the account reserve (base + owner reserve ×
 * OwnerCount), which the ledger never lets it send: the gateway's balance is that spendable part.
 * A withdrawal that would dip into the reserve is INSUFFICIENT_BALANCE here rather than a Failed
 * withdrawal later (the processor checks again before signing). No deposit account yet: nothing
 * to ask the chain about; the ledger's own check refuses the withdrawal.
 */
export const checkXrpReserve = async (chain: ChainDefinition, gateway: ChainGateway, senderAddress: string | null, recipient: string, amount: bigint): Promise<void> => {
  if (chain.family !== 'xrp' || senderAddress === null) return;
  const to = parseXrpRecipient(recipient, chain.network).classicAddress;
  const [spendable, estimate] = await Promise.all([gateway.balance(senderAddress, 'native'), gateway.estimateFee({ from: senderAddress, to, asset: 'native', amount })]);
  if (spendable >= amount + estimate.fee) return;
  throw new DomainError('INSUFFICIENT_BALANCE', `The ${chain.name} account ${senderAddress} holds ${spendable} drops above its account reserve; this withdrawal needs ${amount + estimate.fee} with its fee`, {
    chainId: chain.id,
    tokenId: nativeToken(chain.id).id,
    spendableAboveReserve: spendable.toString(),
    required: (amount + estimate.fee).toString(),
    estimatedFee: estimate.fee.toString(),
  });
};

/** XRP: the organization's address, as its deposit accounts (read model) show it; null before its first one. */
export const xrpOrganizationAddress = async (db: Kysely<Database>, orgId: string, chainId: string): Promise<string | null> => {
  const account = await db.selectFrom('accounts').select('address').where('org_id', '=', orgId).where('chain_id', '=', chainId).limit(1).executeTakeFirst();
  return account?.address ?? null;
};

/**
 * Bitcoin: funds that are only detected (pending) are no use to a withdrawal yet. When they would
 * have covered it, say so (INSUFFICIENT_CONFIRMED_BALANCE) rather than a bare INSUFFICIENT_BALANCE.
 */
export const checkConfirmedBalance = (chain: ChainDefinition, ledger: Balances, amount: bigint): void => {
  if (chain.family !== 'bitcoin' || amount <= ledger.available || amount > ledger.available + ledger.pending) return;
  throw new DomainError('INSUFFICIENT_CONFIRMED_BALANCE', 'Part of the balance is not confirmed yet; wait for the confirmations', {
    chainId: chain.id,
    totalBalance: (ledger.available + ledger.pending).toString(),
    confirmedBalance: ledger.available.toString(),
    unconfirmedBalance: ledger.pending.toString(),
  });
};
