import { describe, expect, it } from 'vitest';
import { checkRecipient } from '../../src/application/withdrawal-checks.js';
import { findChain } from '../../src/catalog/registry.js';
import { DomainError } from '../../src/errors.js';

/** The recipient check remembers valid recipients per chain; what it refuses must stay refused. */
const ethereum = findChain('eip155:1')!;
const bitcoin = findChain('bip122:000000000019d6689c085ae165831e93')!;
const bitcoinTestnet = findChain('bip122:000000000933ea01ad0ee984209779ba')!;
const CHECKSUMMED = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';
const WRONG_CHECKSUM = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD';
const MAINNET_ADDRESS = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';

const refusal = (run: () => void) => {
  try {
    run();
  } catch (error) {
    return error instanceof DomainError ? error.code : error;
  }
  return 'accepted';
};

describe('checkRecipient', () => {
  it('accepts a valid recipient again, and still refuses a near miss after it', () => {
    expect(refusal(() => checkRecipient(ethereum, CHECKSUMMED))).toBe('accepted');
    expect(refusal(() => checkRecipient(ethereum, CHECKSUMMED))).toBe('accepted');
    expect(refusal(() => checkRecipient(ethereum, WRONG_CHECKSUM))).toBe('INVALID_RECIPIENT_ADDRESS');
    expect(refusal(() => checkRecipient(ethereum, WRONG_CHECKSUM))).toBe('INVALID_RECIPIENT_ADDRESS');
  });

  it('remembers a recipient for its own chain only', () => {
    expect(refusal(() => checkRecipient(bitcoin, MAINNET_ADDRESS))).toBe('accepted');
    expect(refusal(() => checkRecipient(bitcoinTestnet, MAINNET_ADDRESS))).toBe('INVALID_RECIPIENT_ADDRESS');
    expect(refusal(() => checkRecipient(ethereum, MAINNET_ADDRESS))).toBe('INVALID_RECIPIENT_ADDRESS');
  });
});
