import { describe, expect, it } from 'vitest';
import type { ChainFamily } from '../../src/catalog/chain.js';
import { addressMatchKey, canonicalAddress } from '../../src/chains/devnet/hashes.js';

/** spellings of a few addresses per family: the same address in other cases, an X-address, and addresses that differ */
const SPELLINGS: Record<ChainFamily, string[]> = {
  evm: [
    '0x9858EfFD232B4033E47d90003D41EC34EcaEda94',
    '0x9858effd232b4033e47d90003d41ec34ecaeda94',
    '0x9858EFFD232B4033E47D90003D41EC34ECAEDA94',
    '0x000000000000000000000000000000000000dEaD',
    '0x000000000000000000000000000000000000dead',
    'not-an-address',
    'NOT-AN-ADDRESS',
  ],
  bitcoin: ['bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq', 'BC1QAR0SRRR7XFKVY5L643LYDNW9RE59GTZZWF5MDQ', '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2', '1bvbmseystwetqtfn5au4m4gfg7xjanvn2'],
  tron: ['TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH', 'tuezsdksodhqmezwihtdobin46zxhgwydh'],
  xrp: ['rHsMGQEkVNJmpGWs8XUBoTBiAAbwxZN5v3', 'X7AcgcsBL6XDcUb289X4mJ8djcdyKaB5hJDWMArnXr61cqZ', 'rPT1Sjq2YGrBMTttX4GZHjKu9dyfzbpAYe'],
};

describe('devnet address matching', () => {
  it('two spellings share a match key exactly when their canonical forms are equal, in every family', () => {
    for (const [family, spellings] of Object.entries(SPELLINGS) as [ChainFamily, string[]][]) {
      for (const a of spellings) {
        for (const b of spellings) {
          expect(addressMatchKey(family, a) === addressMatchKey(family, b), `${family}: ${a} / ${b}`).toBe(canonicalAddress(family, a) === canonicalAddress(family, b));
        }
        // the canonical form is itself a spelling of the same address
        expect(addressMatchKey(family, canonicalAddress(family, a))).toBe(addressMatchKey(family, a));
      }
    }
    expect(canonicalAddress('evm', '0x9858effd232b4033e47d90003d41ec34ecaeda94')).toBe('0x9858EfFD232B4033E47d90003D41EC34EcaEda94');
  });
});
