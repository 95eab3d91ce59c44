import { createHmac, createPrivateKey, createPublicKey, hkdfSync, randomBytes, type KeyObject } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * The service's keys, all derived (HKDF-SHA256) from one master secret: `LEDGERGATE_SECRET_KEY`
 * (base64, 32 bytes or more) from the environment — required in production — or, in development,
 * a key generated once under DATA_DIR/secrets (mode 0600). Keys never reach logs or events.
 */
export interface Keyring {
  /** AES-256-GCM key for secrets stored in events and read models (TOTP seeds, signing secrets) */
  readonly encryptionKey: Buffer;
  /** HS256 key for access tokens */
  readonly jwtKey: Uint8Array;
  /** keyed hash for API keys at rest */
  apiKeyDigest(apiKey: string): string;
  /** Ed25519: signs the heads of audit exports; its public key is published (GET /audit/public-key) */
  readonly audit: { privateKey: KeyObject; publicKeyPem: string };
}

/** PKCS#8 DER of an Ed25519 private key is this prefix and the 32-byte seed (RFC 8410). */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** An Ed25519 key pair from a 32-byte seed. */
export const ed25519FromSeed = (seed: Buffer) => {
  if (seed.length !== 32) throw new Error('an Ed25519 seed is 32 bytes');
  const privateKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  return { privateKey, publicKeyPem: createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString() };
};

const derive = (master: Buffer, purpose: string) => Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `ledgergate:${purpose}`, 32));

/**
 * `auditSeed` (LEDGERGATE_AUDIT_KEY, 32 bytes) gives the audit key a life of its own (kept apart,
 * rotated on its own schedule); without it the audit key derives from the master secret too.
 */
export const keyringFromMaster = (master: Buffer, auditSeed?: Buffer): Keyring => {
  if (master.length < 32) throw new Error('the master secret must be at least 32 bytes');
  const pepper = derive(master, 'api-key-digest');
  return {
    encryptionKey: derive(master, 'secret-encryption'),
    jwtKey: new Uint8Array(derive(master, 'jwt-hs256')),
    apiKeyDigest: (apiKey) => createHmac('sha256', pepper).update(apiKey).digest('hex'),
    audit: ed25519FromSeed(auditSeed ?? derive(master, 'audit-ed25519')),
  };
};

export const loadKeyring = async (options: { secretKey?: string; auditKey?: string; dataDir: string; isProduction: boolean }): Promise<Keyring> => {
  const auditSeed = options.auditKey ? Buffer.from(options.auditKey, 'base64') : undefined;
  if (options.secretKey) return keyringFromMaster(Buffer.from(options.secretKey, 'base64'), auditSeed);
  if (options.isProduction) throw new Error('LEDGERGATE_SECRET_KEY is required in production');
  const file = path.join(options.dataDir, 'secrets', 'master.key');
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await fs.writeFile(file, randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  return keyringFromMaster(Buffer.from((await fs.readFile(file, 'utf8')).trim(), 'base64'), auditSeed);
};
