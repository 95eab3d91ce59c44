import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * Secrets the service must read back (TOTP seeds, webhook signing secrets) are stored encrypted:
 * AES-256-GCM, a random 96-bit nonce, and the secret's purpose as associated data, so a ciphertext
 * moved to another field or organization does not decrypt. Format: `v1.<nonce>.<ciphertext+tag>`.
 */
export type Encrypted = `v1.${string}`;

export const encryptSecret = (key: Buffer, plaintext: string, purpose: string): Encrypted => {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from(purpose));
  const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `v1.${nonce.toString('base64url')}.${sealed.toString('base64url')}`;
};

export const decryptSecret = (key: Buffer, encrypted: string, purpose: string): string => {
  const [version, nonce, sealed] = encrypted.split('.');
  if (version !== 'v1' || !nonce || !sealed) throw new Error('unrecognised secret format');
  const bytes = Buffer.from(sealed, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
  decipher.setAAD(Buffer.from(purpose));
  decipher.setAuthTag(bytes.subarray(bytes.length - 16));
  return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()]).toString('utf8');
};

/** Associated data naming what a secret is for. */
export const secretPurpose = {
  webhookSigningSecret: (orgId: string) => `webhook-signing-secret:${orgId}`,
  totpSeed: (userId: string) => `totp-seed:${userId}`,
} as const;
