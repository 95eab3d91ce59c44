import { describe, expect, it } from 'vitest';
import { tokenOfAsset } from '../../src/catalog/tokens.js';

describe('tokenOfAsset: the catalog token of a watcher’s transfer', () => {
  it('maps native to the chain’s native asset', () => {
    expect(tokenOfAsset('eip155:137', 'native')?.id).toBe('eip155:137/slip44:60');
    expect(tokenOfAsset('xrpl:testnet', 'native')?.id).toBe('xrpl:testnet/slip44:144');
  });

  it('matches an EVM contract in any case, a Tron contract exactly', () => {
    const usdt = 'eip155:1/erc20:0xdac17f958d2ee523a2206206994597c13d831ec7';
    expect(tokenOfAsset('eip155:1', '0xdac17f958d2ee523a2206206994597c13d831ec7')?.id).toBe(usdt);
    expect(tokenOfAsset('eip155:1', '0xDAC17F958D2EE523A2206206994597C13D831EC7')?.id).toBe(usdt);
    const tron = 'tron:0x00000000000000000000000000000000';
    expect(tokenOfAsset(tron, 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t')?.id).toBe(`${tron}/trc20:TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t`);
    expect(tokenOfAsset(tron, 'tr7nhqjekqxgtci8q8zy4pl8otszgjlj6t')).toBeUndefined();
  });

  it('knows nothing of other chains’ contracts, unknown contracts or unknown chains', () => {
    expect(tokenOfAsset('eip155:137', '0xdAC17F958D2ee523a2206206994597C13D831ec7')).toBeUndefined();
    expect(tokenOfAsset('eip155:1', '0x000000000000000000000000000000000000dead')).toBeUndefined();
    expect(tokenOfAsset('eip155:999999', 'native')).toBeUndefined();
  });
});
