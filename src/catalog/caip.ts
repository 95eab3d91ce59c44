import { DomainError } from '../errors.js';
import type { ChainDefinition } from './chain.js';
import { findChain, supportedChainIds } from './registry.js';
import { findToken, type TokenDefinition } from './tokens.js';

/**
 * CAIP-2: `<namespace>:<reference>` (https://chainagnostic.org/CAIPs/caip-2), namespace
 * [-a-z0-9]{3,8}, reference [-_a-zA-Z0-9]. CAIP-2 caps the reference at 32 characters, but SPEC's
 * own Tron id (`tron:0x` + 32 zeros) has 34, so the cap here is 64: every SPEC id must parse.
 */
const NAMESPACE = '[-a-z0-9]{3,8}';
const REFERENCE = '[-_a-zA-Z0-9]{1,64}';
const CHAIN_ID = new RegExp(`^(${NAMESPACE}):(${REFERENCE})$`);

/** CAIP-19: `<chainId>/<asset_namespace>:<asset_reference>` (https://chainagnostic.org/CAIPs/caip-19). */
const TOKEN_ID = new RegExp(`^(${NAMESPACE}:${REFERENCE})/([-a-z0-9]{3,8}):([-.%a-zA-Z0-9]{1,128})$`);

export interface ParsedChainId {
  namespace: string;
  reference: string;
}

export interface ParsedTokenId {
  chainId: string;
  assetNamespace: string;
  assetReference: string;
}

/** The parts of a CAIP-2 id, or null when it is not one (whether or not ledgergate supports it). */
export const parseChainId = (value: string): ParsedChainId | null => {
  const match = CHAIN_ID.exec(value);
  return match ? { namespace: match[1]!, reference: match[2]! } : null;
};

/** The parts of a CAIP-19 asset type id, or null when it is not one. */
export const parseTokenId = (value: string): ParsedTokenId | null => {
  const match = TOKEN_ID.exec(value);
  return match ? { chainId: match[1]!, assetNamespace: match[2]!, assetReference: match[3]! } : null;
};

export const invalidChain = (providedChainId: string) =>
  new DomainError(
    'INVALID_CHAIN',
    parseChainId(providedChainId) === null
      ? `"${providedChainId}" is not a CAIP-2 chain id (<namespace>:<reference>)`
      : `chain ${providedChainId} is not supported`,
    { providedChainId, supportedChains: supportedChainIds() },
  );

/**
 * An unknown or malformed token id. INVALID_TOKEN as a DomainError is always this refusal (422);
 * the JWT's INVALID_TOKEN (401) is answered by the authentication middleware itself.
 */
export const invalidToken = (providedTokenId: string) =>
  new DomainError(
    'INVALID_TOKEN',
    parseTokenId(providedTokenId) === null
      ? `"${providedTokenId}" is not a CAIP-19 token id (<chainId>/<asset_namespace>:<asset_reference>)`
      : `token ${providedTokenId} is not supported`,
    { providedTokenId },
  );

/** The supported chain with this CAIP-2 id; INVALID_CHAIN for a malformed or unsupported one. */
export const requireSupportedChain = (chainId: string): ChainDefinition => {
  const chain = findChain(chainId);
  if (!chain) throw invalidChain(chainId);
  return chain;
};

/** The catalog token with this CAIP-19 id; INVALID_TOKEN for a malformed or unknown one. */
export const requireKnownToken = (tokenId: string): TokenDefinition => {
  const token = findToken(tokenId);
  if (!token) throw invalidToken(tokenId);
  return token;
};
