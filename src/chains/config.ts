import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { ChainFamily } from '../catalog/chain.js';
import { findChain, supportedChainIds } from '../catalog/registry.js';
import type { Signer } from './signer/signer.js';

/**
 * CHAINS_CONFIG: the real networks the service runs on, one entry per CAIP-2 chain id. A chain
 * with an entry (and `enabled` not false) runs on its RPC endpoints; one without runs on the
 * built-in devnet outside production and not at all in production (CHAIN_NOT_ENABLED).
 */

const gwei = z.number().positive().max(1_000_000, 'at most 1,000,000 gwei');

/**
 * EVM, Tron: the settlement wallet's gas buffer (src/processes/withdrawal-processor/gas-buffer.ts):
 * a top-up from the gas wallet pays for this many withdrawals at the current fee estimate (0: no
 * buffer, each withdrawal gets exactly its own fee, confirmed before it is sent); the next is sent
 * when what is left pays for fewer than `gasBufferLowWaterPayments` (default a quarter of it).
 */
const gasBufferFields = {
  gasBufferPayments: z.number().int().min(0).max(10_000).optional(),
  gasBufferLowWaterPayments: z.number().int().min(0).max(10_000).optional(),
};

/** EVM fee policy: what the EIP-1559 estimate offers, and its limits. */
const evmFeesSchema = z.strictObject({
  ...gasBufferFields,
  /** the highest maxFeePerGas the service signs, in gwei: estimates above it are capped (a transaction may then wait for cheaper blocks) */
  maxFeePerGasGwei: gwei.optional(),
  /** the tip per gas, in gwei; unset: what the node suggests (eth_maxPriorityFeePerGas) */
  priorityFeeGwei: z.number().nonnegative().max(1_000_000).optional(),
  /** maxFeePerGas = base fee × this + tip, so a transaction survives rising base fees for a few blocks; default 2 */
  baseFeeMultiplier: z.number().min(1).max(10).optional(),
  /** gas limit of an ERC-20 transfer when the node cannot estimate it (e.g. the sender holds no tokens yet); default 100000 */
  tokenTransferGasLimit: z.number().int().min(21_000).max(1_000_000).optional(),
  /** blocks a withdrawal may stay pending before it is replaced at higher fees (same nonce, EIP-1559 +10 %, never above maxFeePerGasGwei); default 6 */
  replaceAfterBlocks: z.number().int().min(1).max(1008).optional(),
});

const satPerVbyte = z.number().int().min(1).max(10_000);

/** Bitcoin fee policy: the confirmation target of the fee-rate estimate, and bounds on the rate signed. */
const bitcoinFeesSchema = z
  .strictObject({
    /** the confirmation target, in blocks, the node's fee-rate estimate is taken for; default 3 */
    feeTargetBlocks: z.number().int().min(1).max(1008).optional(),
    /** the lowest fee rate signed, sat/vB: a lower estimate is raised to it */
    minFeeRateSatPerVbyte: satPerVbyte.optional(),
    /** the highest fee rate signed, sat/vB: a higher estimate is capped (the transaction may then wait; a stuck withdrawal can be bumped) */
    maxFeeRateSatPerVbyte: satPerVbyte.optional(),
    /** blocks a withdrawal may stay unconfirmed before it is replaced by fee (BIP125, src/processes/withdrawal-processor/replacement.ts); default 6 */
    replaceAfterBlocks: z.number().int().min(1).max(1008).optional(),
  })
  .refine((fees) => fees.minFeeRateSatPerVbyte === undefined || fees.maxFeeRateSatPerVbyte === undefined || fees.minFeeRateSatPerVbyte <= fees.maxFeeRateSatPerVbyte, {
    message: 'minFeeRateSatPerVbyte is above maxFeeRateSatPerVbyte',
    path: ['minFeeRateSatPerVbyte'],
  });

/** Tron fee policy: the ceiling of a TRC-20 transfer's fee_limit (what its energy may burn). */
const tronFeesSchema = z.strictObject({
  ...gasBufferFields,
  /**
   * the highest fee_limit a TRC-20 transfer carries, in sun (1 TRX = 1,000,000 sun; the network's
   * own ceiling is 15,000 TRX): the estimate's limit (its energy at today's price + 20%) is capped at
   * it, and a transfer whose estimated energy alone costs more is not signed (it waits and is estimated again)
   */
  maxFeeLimitSun: z.number().int().min(1).max(15_000_000_000).optional(),
});

/** XRP fee policy: the most a payment offers when the open ledger's fee escalates. */
const xrpFeesSchema = z.strictObject({
  /** the highest Fee a payment offers, in drops; default 1000. Above it the payment offers this and waits in the queue (never below the base fee) */
  maxFeeDrops: z.number().int().min(1).max(100_000_000).optional(),
});

const feesSchemas = { evm: evmFeesSchema, bitcoin: bitcoinFeesSchema, tron: tronFeesSchema, xrp: xrpFeesSchema } as const;

const rpcUrl = z.url({ protocol: /^https?$/, error: 'an http:// or https:// JSON-RPC endpoint' });

/** Bitcoin Core's RPC credentials: rpcuser/rpcpassword (or an rpcauth entry's), or the cookie file the node writes at each start */
const bitcoinRpcAuthSchema = z.union([
  z.strictObject({ user: z.string().min(1), password: z.string().min(1) }),
  z.strictObject({ cookieFile: z.string().min(1, "the path of the node's .cookie file") }),
]);

/**
 * Which node API a Bitcoin chain runs on: `esplora` (an Esplora/electrs HTTP API; the default) or
 * `rpc` (Bitcoin Core's JSON-RPC, with `txindex=1`; `rpcAuth` its credentials).
 */
const bitcoinNodeSchema = {
  kind: z.enum(['esplora', 'rpc']).default('esplora'),
  rpcAuth: bitcoinRpcAuthSchema.optional(),
};

const chainEntrySchema = (family: ChainFamily) =>
  z.strictObject({
    ...(family === 'bitcoin' ? bitcoinNodeSchema : {}),
    /** default true; false keeps the entry but runs nothing (CHAIN_NOT_ENABLED) */
    enabled: z.boolean().default(true),
    /** tried in order: a timeout or transport error moves to the next one */
    rpcUrls: z.array(rpcUrl).min(1, 'at least one RPC endpoint'),
    /** overrides the registry's confirmations for deposits, sweeps and withdrawals (and GET /chains) */
    confirmations: z.number().int().min(1).max(10_000).optional(),
    /**
     * The account-level extended public key of the chain's family (m/44'/60'/0' on EVM…). The signer's
     * mnemonic stays the only key source; when set it must equal the signer's, or the service refuses
     * to start (a guard against serving deposit addresses from the wrong keys).
     */
    accountXpub: z.string().regex(/^xpub[1-9A-HJ-NP-Za-km-z]{100,112}$/, 'an account-level extended public key (xpub…)').optional(),
    fees: (feesSchemas[family] as z.ZodType<FeePolicy>).optional(),
    /** per RPC request, before the next endpoint is tried; default 10000 */
    rpcTimeoutMs: z.number().int().min(100).max(120_000).default(10_000),
    /** how long a sent transaction may stay without an outcome before it is reported as stuck; default 30 minutes */
    stuckAfterMs: z.number().int().min(1_000).max(7 * 24 * 3_600_000).optional(),
  }).refine((entry) => !('rpcAuth' in entry && entry.rpcAuth !== undefined) || ('kind' in entry && entry.kind === 'rpc'), {
    message: 'rpcAuth is for kind "rpc" (Bitcoin Core); an Esplora URL needs none',
    path: ['rpcAuth'],
  });

export type EvmFeePolicy = z.infer<typeof evmFeesSchema>;
export type BitcoinFeePolicy = z.infer<typeof bitcoinFeesSchema>;
export type TronFeePolicy = z.infer<typeof tronFeesSchema>;
export type XrpFeePolicy = z.infer<typeof xrpFeesSchema>;
export type BitcoinRpcAuth = z.infer<typeof bitcoinRpcAuthSchema>;
/** the `fees` of a chain's entry; each family's gateway reads its own (the schema matched the family) */
export type FeePolicy = EvmFeePolicy | BitcoinFeePolicy | TronFeePolicy | XrpFeePolicy;

export interface ChainSettings {
  enabled: boolean;
  /** Bitcoin: the node API (absent: esplora) */
  kind?: 'esplora' | 'rpc';
  /** Bitcoin Core's credentials (kind rpc) */
  rpcAuth?: BitcoinRpcAuth;
  rpcUrls: string[];
  confirmations?: number;
  accountXpub?: string;
  fees?: FeePolicy;
  rpcTimeoutMs: number;
  stuckAfterMs?: number;
}

export interface ChainsConfig {
  /** by CAIP-2 chain id; only supported chains */
  chains: ReadonlyMap<string, ChainSettings>;
}

export class ChainsConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`invalid CHAINS_CONFIG:\n  ${issues.join('\n  ')}`);
    this.name = 'ChainsConfigError';
  }
}

const issuesAt = (prefix: string, error: z.ZodError): string[] =>
  error.issues.map((issue) => `${[prefix, ...issue.path.map(String)].join('.')}: ${issue.message}`);

/** Validates the parsed JSON; every problem is reported, each naming its key (`chains.eip155:1.rpcUrls.0`). */
export const parseChainsConfig = (document: unknown): ChainsConfig => {
  const top = z.strictObject({ chains: z.record(z.string(), z.unknown()) }).safeParse(document);
  if (!top.success) throw new ChainsConfigError(issuesAt('', top.error).map((issue) => issue.replace(/^\./, '')));
  const issues: string[] = [];
  const chains = new Map<string, ChainSettings>();
  for (const [chainId, entry] of Object.entries(top.data.chains)) {
    const chain = findChain(chainId);
    if (!chain) {
      issues.push(`chains.${chainId}: unknown chain id (supported: ${supportedChainIds().join(', ')})`);
      continue;
    }
    const parsed = chainEntrySchema(chain.family).safeParse(entry);
    // the Bitcoin-only keys are spread in by family, which the inferred type cannot follow
    if (parsed.success) chains.set(chainId, parsed.data as ChainSettings);
    else issues.push(...issuesAt(`chains.${chainId}`, parsed.error));
  }
  if (issues.length > 0) throw new ChainsConfigError(issues);
  return { chains };
};

/** Reads and validates the file CHAINS_CONFIG names. */
export const readChainsConfig = (path: string): ChainsConfig => {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ChainsConfigError([`cannot read ${path}: ${(error as Error).message}`]);
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new ChainsConfigError([`${path} is not valid JSON: ${(error as Error).message}`]);
  }
  return parseChainsConfig(document);
};

/** The configured settings of a chain that runs on its own nodes; undefined when it is not configured or switched off. */
export const nodeSettingsOf = (config: ChainsConfig | null | undefined, chainId: string): ChainSettings | undefined => {
  const settings = config?.chains.get(chainId);
  return settings?.enabled ? settings : undefined;
};

/**
 * Start-up guard: the signer (LEDGERGATE_SIGNER_MNEMONIC) is the only key source, so a configured
 * chain needs it, and an `accountXpub` in the file must be the one the signer derives: otherwise
 * deposits would go to addresses the service cannot spend. Throws naming every mismatch.
 */
export const checkConfiguredKeys = (config: ChainsConfig | null | undefined, signer: Pick<Signer, 'accountXpub'> | null): void => {
  const issues: string[] = [];
  for (const [chainId, settings] of config?.chains ?? []) {
    if (!settings.enabled) continue;
    const chain = findChain(chainId)!;
    if (!signer) {
      issues.push(`chains.${chainId}: enabled, but LEDGERGATE_SIGNER_MNEMONIC is not set (the signer holds the chain's keys)`);
      continue;
    }
    if (settings.accountXpub !== undefined && settings.accountXpub !== signer.accountXpub(chain.family, chain.network)) {
      issues.push(`chains.${chainId}.accountXpub: is not the signer's ${chain.family} ${chain.network} account key (derive it from LEDGERGATE_SIGNER_MNEMONIC, or leave it out)`);
    }
  }
  if (issues.length > 0) throw new ChainsConfigError(issues);
};
