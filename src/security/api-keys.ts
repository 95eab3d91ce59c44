import { randomBytes, timingSafeEqual } from 'node:crypto';
import { BoundedMap } from '../lib/bounded-map.js';

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

/**
 * The keyed digest of each key id's last key, remembered (at most `limit` key ids, in this
 * process's memory only) so a caller that presents the same key again is not hashed again. The
 * remembered key is compared with the presented one in constant time. A digest says nothing of
 * whether its key is current: that is decided on the organization's stream every time.
 */
export class ApiKeyDigests {
  private readonly lastKeys: BoundedMap<string, { key: Buffer; digest: string }>;

  constructor(
    private readonly digestOf: (apiKey: string) => string,
    limit: number,
  ) {
    this.lastKeys = new BoundedMap(limit);
  }

  digest(keyId: string, apiKey: string): string {
    const key = Buffer.from(apiKey);
    const last = this.lastKeys.get(keyId);
    if (last && last.key.length === key.length && timingSafeEqual(last.key, key)) return last.digest;
    const digest = this.digestOf(apiKey);
    this.lastKeys.set(keyId, { key, digest });
    return digest;
  }
}
