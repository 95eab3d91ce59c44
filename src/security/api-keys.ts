import { randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * An API key is `lgk_<keyId>_<secret>`: the key id finds the row, the keyed digest of the whole
 * key (Keyring.apiKeyDigest) is compared in constant time. Only the digest is stored.
 */
const FORMAT = /^lgk_([0-9a-f]{24})_([A-Za-z0-9_-]{43})$/;

export const generateApiKey = (): { apiKey: string; keyId: string } => {
  const keyId = randomBytes(12).toString('hex');
  return { apiKey: `lgk_${keyId}_${randomBytes(32).toString('base64url')}`, keyId };
};

export const apiKeyId = (apiKey: string): string | null => FORMAT.exec(apiKey)?.[1] ?? null;

export const digestsMatch = (a: string, b: string): boolean => {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
};

export const generateWebhookSigningSecret = (): string => `whsec_${randomBytes(32).toString('base64url')}`;
