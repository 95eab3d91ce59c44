import path from 'node:path';
import { z } from 'zod';
import { ChainsConfigError, readChainsConfig, type ChainsConfig } from '../chains/config.js';

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

const retryDelaysMs = z
  .string()
  .regex(/^\d+(,\d+)*$/, 'a comma-separated list of whole milliseconds')
  .transform((value) => value.split(',').map(Number));

/**
 * CONTRACT §7's webhook retry schedule: the delay before each retry. A delivery gets one first
 * attempt and then one retry per delay, so with these five delays it is `failed` after 6 attempts
 * (the first and 5 retries).
 */
export const DEFAULT_WEBHOOK_RETRY_DELAYS_MS = [5_000, 25_000, 120_000, 600_000, 3_600_000] as const;

const eventStoreUrl = z
  .string()
  .regex(/^(kurrentdb|esdb|kdb)(\+discover)?:\/\//, 'a kurrentdb:// or esdb:// connection string');

/**
 * The parts of the service a `serve` process can run (CONTRACT §11: any number of processes may
 * share one database): the API; the projections (the read models and the webhook outbox they fill);
 * the webhook dispatcher; the chains (the devnet's block producer, deposit watchers, sweepers and
 * withdrawal processors).
 */
export const SERVICE_PARTS = ['api', 'projections', 'webhooks', 'chains'] as const;
export type ServicePart = (typeof SERVICE_PARTS)[number];
/** SERVE_ROLE's names for sets of parts: `all` runs every part, `workers` every part but the API */
export const SERVE_ROLES = { all: SERVICE_PARTS, workers: ['projections', 'webhooks', 'chains'] } as const satisfies Record<string, readonly ServicePart[]>;
/** `all`, `workers`, or a comma-separated list of parts (`api`, `projections`, `webhooks,chains`), as written */
export type ServeRole = string;

/** the names SERVE_ROLE lists: a set's parts, or the parts written, in order (checked by serveRole) */
const namesIn = (role: ServeRole): readonly string[] => (role in SERVE_ROLES ? SERVE_ROLES[role as keyof typeof SERVE_ROLES] : role.split(',').map((part) => part.trim()));

const serveRole = z
  .string()
  .trim()
  .refine(
    (value) => {
      const names = namesIn(value);
      return names.every((name) => (SERVICE_PARTS as readonly string[]).includes(name)) && new Set(names).size === names.length;
    },
    `all, workers, or a comma-separated list of ${SERVICE_PARTS.join(', ')} (each once)`,
  );

/** the parts SERVE_ROLE names */
export const serviceParts = (role: ServeRole): ReadonlySet<ServicePart> => new Set(namesIn(role) as readonly ServicePart[]);

/** Every environment variable the service and the CLI read, parsed once (CONTRACT §1). */
export const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATA_DIR: z.string().min(1).default('./.data'),
  DATABASE_URL: z.string().url().optional(),
  EVENTSTORE_URL: eventStoreUrl.optional(),
  CHAINS_CONFIG: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  RATE_LIMIT_PER_MINUTE: positiveInt(1200),
  LOGIN_RATE_LIMIT_PER_MINUTE: positiveInt(10),
  DEVNET_BLOCK_TIME_MS: positiveInt(2000),
  WEBHOOK_RETRY_DELAYS_MS: retryDelaysMs.default([...DEFAULT_WEBHOOK_RETRY_DELAYS_MS]),
  /** base64, at least 32 bytes: the master secret all service keys derive from (required in production) */
  /** base64 of 32 bytes: the Ed25519 seed of the audit key that signs export heads (default: derived from LEDGERGATE_SECRET_KEY) */
  LEDGERGATE_AUDIT_KEY: z
    .string()
    .refine((value) => Buffer.from(value, 'base64').length === 32, 'base64 of exactly 32 random bytes')
    .optional(),
  LEDGERGATE_SECRET_KEY: z
    .string()
    .refine((value) => Buffer.from(value, 'base64').length >= 32, 'base64 of at least 32 random bytes')
    .optional(),
  /** BIP39 mnemonic of the signer (the only private keys); generated under DATA_DIR outside production */
  LEDGERGATE_SIGNER_MNEMONIC: z.string().min(1).optional(),
  /** connections of the request path's pool (API reads, the CLI) */
  DATABASE_POOL_SIZE: positiveInt(10),
  /** connections of the read side's pool: the projections' reads and the webhook dispatcher */
  DATABASE_READ_SIDE_POOL_SIZE: positiveInt(12),
  /** connections of the background workers' pool: deposit watchers, sweepers, withdrawal processors, the devnet */
  DATABASE_WORKERS_POOL_SIZE: positiveInt(16),
  SHUTDOWN_TIMEOUT_MS: positiveInt(10_000),
  /**
   * what `serve` runs: `all` (the API and the background work, one process), `api` (the API alone),
   * `workers` (projections, webhook delivery, chain workers and the devnet's blocks, with only
   * /healthz, /readyz and /metrics on PORT), or a comma-separated list of the parts
   * (SERVICE_PARTS), e.g. `projections` and `webhooks,chains` for the background work on two processes
   */
  SERVE_ROLE: serveRole.default('all'),
});

export type Env = z.infer<typeof envSchema>;

export interface Config extends Env {
  /** DATA_DIR, absolute */
  dataDir: string;
  isProduction: boolean;
  /** the validated CHAINS_CONFIG file; null when unset (every chain on the devnet outside production, none in production) */
  chains: ChainsConfig | null;
}

export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`invalid configuration:\n  ${issues.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

export const loadConfig = (source: NodeJS.ProcessEnv = process.env): Config => {
  const present = Object.fromEntries(Object.entries(source).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  }
  const env = parsed.data;
  if (env.NODE_ENV === 'production' && !env.LEDGERGATE_SECRET_KEY) {
    throw new ConfigError(['LEDGERGATE_SECRET_KEY: required in production (base64 of at least 32 random bytes)']);
  }
  let chains: ChainsConfig | null = null;
  try {
    chains = env.CHAINS_CONFIG === undefined ? null : readChainsConfig(path.resolve(env.CHAINS_CONFIG));
  } catch (error) {
    if (error instanceof ChainsConfigError) throw new ConfigError(error.issues.map((issue) => `CHAINS_CONFIG ${issue}`));
    throw error;
  }
  return { ...env, dataDir: path.resolve(env.DATA_DIR), isProduction: env.NODE_ENV === 'production', chains };
};
