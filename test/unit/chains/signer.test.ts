import ecc from '@bitcoinerlab/secp256k1';
import { BIP32Factory } from 'bip32';
import { mnemonicToSeedSync } from 'bip39';
import { HDNodeWallet } from 'ethers';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { bitcoinAddresses } from '../../../src/chains/bitcoin/address.js';
import { evmAddresses } from '../../../src/chains/evm/address.js';
import { findChain } from '../../../src/catalog/registry.js';
import { createSigner } from '../../../src/chains/signer/signer.js';
import { tronTransactions } from '../../../src/chains/tron/transactions.js';
import { xrpTransactions } from '../../../src/chains/xrp/transactions.js';

// a mnemonic other than the published vectors', so nothing here can pass by coincidence with them
const MNEMONIC = 'legal winner thank year wave sausage worth useful legal winner thank yellow';
const signer = createSigner(MNEMONIC);
const root = BIP32Factory(ecc).fromSeed(mnemonicToSeedSync(MNEMONIC));
const ethereum = findChain('eip155:1')!;
const sepolia = findChain('eip155:11155111')!;
const bitcoin = findChain('bip122:000000000019d6689c085ae165831e93')!;
const bitcoinTestnet = findChain('bip122:000000000933ea01ad0ee984209779ba')!;
const tron = findChain('tron:0x00000000000000000000000000000000')!;
const xrp = findChain('xrpl:mainnet')!;

describe('signer', () => {
  it('addresses derived from its account xpubs equal those of its private keys', () => {
    for (const index of [0, 1, 2, 10, 4_000]) {
      const wallet = { branch: 'receive', index } as const;
      expect(signer.addressOf(ethereum, wallet)).toBe(evmAddresses.deriveAddress(signer.accountXpub('evm', 'mainnet'), index, 'mainnet'));
      expect(signer.addressOf(sepolia, wallet)).toBe(evmAddresses.deriveAddress(signer.accountXpub('evm', 'testnet'), index, 'testnet'));
      expect(signer.addressOf(bitcoin, wallet)).toBe(bitcoinAddresses.deriveAddress(signer.accountXpub('bitcoin', 'mainnet'), index, 'mainnet'));
      expect(signer.addressOf(bitcoinTestnet, wallet)).toBe(bitcoinAddresses.deriveAddress(signer.accountXpub('bitcoin', 'testnet'), index, 'testnet'));
      expect(signer.addressOf(ethereum, wallet)).toBe(HDNodeWallet.fromPhrase(MNEMONIC, undefined, `m/44'/60'/0'/0/${index}`).address);
    }
  });

  it('service wallets are the 1/i children of the account', () => {
    expect(signer.addressOf(ethereum, { branch: 'service', index: 2 })).toBe(HDNodeWallet.fromPhrase(MNEMONIC, undefined, "m/44'/60'/0'/1/2").address);
    expect(signer.addressOf(bitcoin, { branch: 'service', index: 0 })).toBe(bitcoinAddresses.addressFromPublicKey(root.derivePath("m/84'/0'/0'/1/0").publicKey, 'mainnet'));
  });

  it('prints as "[Signer]" and exposes no key material', () => {
    expect(JSON.stringify(signer)).toBe('"[Signer]"');
    expect(JSON.stringify({ signer })).toBe('{"signer":"[Signer]"}');
    expect(inspect(signer)).toBe('[Signer]');
    expect(inspect({ signer }, { depth: 5 })).toBe('{ signer: [Signer] }');
    expect(Object.keys(signer).sort()).toEqual(['accountXpub', 'addressOf', 'signBitcoinTransfer', 'signEvmTransfer', 'signTronTransfer', 'signXrpPayment']);
  });

  it('what it signs carries no private key', () => {
    const evmKey = HDNodeWallet.fromPhrase(MNEMONIC, undefined, "m/44'/60'/0'/0/0").privateKey.slice(2);
    const raw = signer.signEvmTransfer(ethereum, { branch: 'receive', index: 0 }, {
      to: '0x000000000000000000000000000000000000dEaD',
      asset: 'native',
      amount: 1n,
      nonce: 0,
      gasLimit: 21_000n,
      maxFeePerGas: 2n,
      maxPriorityFeePerGas: 1n,
    });
    expect(raw).not.toContain(evmKey);

    const bitcoinKey = Buffer.from(root.derivePath("m/84'/0'/0'/0/0").privateKey!).toString('hex');
    const signed = signer.signBitcoinTransfer(bitcoin, [{ wallet: { branch: 'receive', index: 0 }, txHash: 'ab'.repeat(32), index: 0, amount: 5_000n }], [
      { address: signer.addressOf(bitcoin, { branch: 'service', index: 0 }), amount: 4_000n },
    ]);
    expect(JSON.stringify(signed)).not.toContain(bitcoinKey);
  });

  it('signs Tron and XRP transfers from its wallets: the codecs recover its addresses as senders', () => {
    const wallet = { branch: 'service', index: 3 } as const;
    const tronRaw = signer.signTronTransfer(tron, wallet, {
      to: 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH',
      amount: 1_500_000n,
      refBlock: { number: 1_000, hash: 'ab'.repeat(32) },
      expiration: 1_800_000_060_000,
      timestamp: 1_800_000_000_000,
    });
    const tronDecoded = tronTransactions.decodeSignedTransaction(tronRaw, { chain: tron });
    expect(tronDecoded.from).toBe(signer.addressOf(tron, wallet));
    expect(tronDecoded.transfers).toEqual([
      { index: 0, from: signer.addressOf(tron, wallet), to: 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH', asset: 'native', amount: 1_500_000n, destinationTag: null },
    ]);

    const blob = signer.signXrpPayment(xrp, wallet, {
      destination: 'rHsMGQEkVNJmpGWs8XUBoTBiAAbwxZN5v3',
      amountDrops: 25_000_000n,
      destinationTag: 42,
      fee: 12n,
      sequence: 7,
      lastLedgerSequence: 100,
    });
    const xrpDecoded = xrpTransactions.decodeSignedTransaction(blob, { chain: xrp });
    expect(xrpDecoded).toMatchObject({ from: signer.addressOf(xrp, wallet), fee: 12n, nonce: 7 });
    expect(xrpDecoded.transfers).toEqual([
      { index: 0, from: signer.addressOf(xrp, wallet), to: 'rHsMGQEkVNJmpGWs8XUBoTBiAAbwxZN5v3', asset: 'native', amount: 25_000_000n, destinationTag: 42 },
    ]);
  });
});
