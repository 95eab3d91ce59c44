import { describe, expect, it } from 'vitest';
import { ApiKeyDigests, apiKeyId, generateApiKey } from '../../src/security/api-keys.js';
import { keyringFromMaster } from '../../src/security/keyring.js';

const keyring = keyringFromMaster(Buffer.alloc(32, 7));

const countingDigests = () => {
  const hashed: string[] = [];
  const digests = new ApiKeyDigests((apiKey) => {
    hashed.push(apiKey);
    return keyring.apiKeyDigest(apiKey);
  }, 2);
  return { digests, hashed };
};

describe('API key digests remembered per key id', () => {
  it('hashes a key presented again once, and gives the keyring’s digest every time', () => {
    const { digests, hashed } = countingDigests();
    const { apiKey, keyId } = generateApiKey();
    expect(digests.digest(keyId, apiKey)).toBe(keyring.apiKeyDigest(apiKey));
    expect(digests.digest(keyId, apiKey)).toBe(keyring.apiKeyDigest(apiKey));
    expect(hashed).toEqual([apiKey]);
  });

  it('hashes another key under the same id (a guess, or a key rotated under it) on its own, never answering the remembered digest', () => {
    const { digests, hashed } = countingDigests();
    const { apiKey, keyId } = generateApiKey();
    const guess = `${apiKey.slice(0, -1)}${apiKey.endsWith('A') ? 'B' : 'A'}`;
    expect(apiKeyId(guess)).toBe(keyId);
    const digest = digests.digest(keyId, apiKey);
    expect(digests.digest(keyId, guess)).toBe(keyring.apiKeyDigest(guess));
    expect(digests.digest(keyId, guess)).not.toBe(digest);
    expect(digests.digest(keyId, apiKey)).toBe(digest);
    expect(hashed).toEqual([apiKey, guess, apiKey]);
  });

  it('remembers at most its limit of key ids', () => {
    const { digests, hashed } = countingDigests();
    const keys = [generateApiKey(), generateApiKey(), generateApiKey()];
    for (const { apiKey, keyId } of keys) digests.digest(keyId, apiKey);
    digests.digest(keys[0]!.keyId, keys[0]!.apiKey);
    expect(hashed).toHaveLength(4);
  });
});
