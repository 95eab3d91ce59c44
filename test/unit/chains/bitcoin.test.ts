import ecc from '@bitcoinerlab/secp256k1';
import { BIP32Factory } from 'bip32';
import { mnemonicToSeedSync } from 'bip39';
import { networks, payments, Transaction } from 'bitcoinjs-lib';
import { decodeBase58, encodeBase58, getBytes, sha256, toBeArray } from 'ethers';
import { describe, expect, it } from 'vitest';
import { bitcoinAddresses } from '../../../src/chains/bitcoin/address.js';
import { bitcoinTransactions, signBitcoinTransfer } from '../../../src/chains/bitcoin/transactions.js';
import { InvalidTransactionError, type PreviousOutput } from '../../../src/catalog/chain.js';
import { findChain } from '../../../src/catalog/registry.js';
import { createSigner } from '../../../src/chains/signer/signer.js';

const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const bitcoin = findChain('bip122:000000000019d6689c085ae165831e93')!;
const bitcoinTestnet = findChain('bip122:000000000933ea01ad0ee984209779ba')!;
const signer = createSigner(MNEMONIC);
const root = BIP32Factory(ecc).fromSeed(mnemonicToSeedSync(MNEMONIC));

/** BIP84's account-level extended public key of the "abandon … about" mnemonic, in its zpub form. */
const BIP84_ZPUB = 'zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs';

/** Re-encodes an extended key with other BIP32 version bytes (zpub 0x04b24746 → xpub 0x0488b21e). */
const withVersion = (extendedKey: string, version: number) => {
  const payload = toBeArray(decodeBase58(extendedKey)).slice(0, -4);
  new DataView(payload.buffer, payload.byteOffset).setUint32(0, version);
  const checksum = getBytes(sha256(sha256(payload))).slice(0, 4);
  return encodeBase58(new Uint8Array([...payload, ...checksum]));
};

const txid = (seed: string) => sha256(Buffer.from(seed)).slice(2);

describe('Bitcoin addresses (BIP84)', () => {
  it('the signer publishes BIP84\'s account key (as xpub) and derives its published addresses', () => {
    const xpub = signer.accountXpub('bitcoin', 'mainnet');
    expect(xpub).toBe(withVersion(BIP84_ZPUB, 0x0488b21e));
    expect(withVersion(xpub, 0x04b24746)).toBe(BIP84_ZPUB);
    expect(bitcoinAddresses.accountPath('mainnet')).toBe("m/84'/0'/0'");
    expect(bitcoinAddresses.deriveAddress(xpub, 0, 'mainnet')).toBe('bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu');
    expect(bitcoinAddresses.deriveAddress(xpub, 1, 'mainnet')).toBe('bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g');
    expect(signer.addressOf(bitcoin, { branch: 'service', index: 0 })).toBe('bc1q8c6fshw2dlwun7ekn9qwf37cu2rn755upcp6el'); // BIP84's first change address
  });

  it('testnet uses coin type 1\' under an xpub-encoded key and encodes tb1', () => {
    const xpub = signer.accountXpub('bitcoin', 'testnet');
    expect(xpub.startsWith('xpub')).toBe(true);
    expect(bitcoinAddresses.accountPath('testnet')).toBe("m/84'/1'/0'");
    const independent = payments.p2wpkh({ pubkey: root.derivePath("m/84'/1'/0'/0/0").publicKey, network: networks.testnet }).address;
    expect(independent).toBe('tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl');
    expect(bitcoinAddresses.deriveAddress(xpub, 0, 'testnet')).toBe(independent);
    for (const index of [1, 7, 2 ** 31 - 1]) {
      const expected = payments.p2wpkh({ pubkey: root.derivePath(`m/84'/1'/0'/0/${index}`).publicKey, network: networks.testnet }).address;
      expect(bitcoinAddresses.deriveAddress(xpub, index, 'testnet'), `index ${index}`).toBe(expected);
    }
    expect(() => bitcoinAddresses.deriveAddress(xpub, 2 ** 31, 'testnet')).toThrow();
  });

  it('computes the P2WPKH address of a compressed public key', () => {
    expect(bitcoinAddresses.addressFromPublicKey(root.derivePath("m/84'/0'/0'/0/0").publicKey, 'mainnet')).toBe('bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu');
    expect(bitcoinAddresses.addressFromPublicKey(root.derivePath("m/84'/1'/0'/0/0").publicKey, 'testnet')).toBe('tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl');
  });

  const mainnetOnly = [
    'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu', // P2WPKH (bech32 v0)
    'BC1QCR8TE4KR609GCAWUTMRZA0J4XV80JY8Z306FYU', // the same, all upper case
    'bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr', // BIP86 taproot (bech32m v1)
    '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa', // P2PKH
    '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy', // P2SH (BIP13)
  ];
  const testnetOnly = [
    'tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl', // P2WPKH
    'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7', // P2WSH (BIP173)
    'tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c', // taproot (BIP350)
    'mkHS9ne12qx9pS9VojpwU5xtRd4T7X7ZUt', // P2PKH
    '2MzQwSSnBHWHqSAqtTVQ6v47XtaisrJa1Vc', // P2SH
  ];
  const neither = [
    'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyv', // checksum of another address
    'bc1qcr8te4kr609gcawutmrza0j4xv80jy8Z306fyu', // mixed case
    'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd', // BIP350: v1 with a bech32 (not bech32m) checksum
    'tb1z0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqglt7rf', // BIP350: v2 with a bech32 checksum
    'bcrt1q6rz28mcfaxtmd6v789l9rrlrusdprr9pkcwx3y', // regtest
    '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb', // base58 checksum broken
    ' bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu',
    '0x9858EfFD232B4033E47d90003D41EC34EcaEda94',
    'garbage',
    '',
  ];

  it.each([
    ['mainnet', mainnetOnly, [...testnetOnly, ...neither]],
    ['testnet', testnetOnly, [...mainnetOnly, ...neither]],
  ] as const)('validates %s addresses, each only on its own network', (network, good, bad) => {
    for (const address of good) expect(bitcoinAddresses.isValidAddress(address, network), address).toBe(true);
    for (const address of bad) expect(bitcoinAddresses.isValidAddress(address, network), address).toBe(false);
  });
});

describe('Bitcoin transactions', () => {
  const receive0 = { branch: 'receive', index: 0 } as const;
  const receive1 = { branch: 'receive', index: 1 } as const;
  const change = { branch: 'service', index: 0 } as const;
  const payee = 'bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr';
  const funding = [
    { wallet: receive0, txHash: txid('funding-a'), index: 1, amount: 150_000n },
    { wallet: receive1, txHash: txid('funding-b'), index: 0, amount: 80_000n },
  ];
  const outputs = [
    { address: payee, amount: 200_000n },
    { address: signer.addressOf(bitcoin, change), amount: 27_500n },
  ];
  const knownOutputs = new Map<string, PreviousOutput>(
    funding.map((input) => [`${input.txHash}:${input.index}`, { address: signer.addressOf(bitcoin, input.wallet), amount: input.amount }]),
  );
  const previousOutput = (txHash: string, index: number) => knownOutputs.get(`${txHash}:${index}`);
  const decode = (raw: string, lookup = previousOutput, chain = bitcoin) => bitcoinTransactions.decodeSignedTransaction(raw, { chain, previousOutput: lookup });
  const signed = signer.signBitcoinTransfer(bitcoin, funding, outputs);

  it('two inputs and change, signed by the signer, decode to exactly those outputs and fee', () => {
    const from = 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu';
    expect(decode(signed.raw)).toEqual({
      hash: signed.txHash,
      from,
      transfers: [
        { index: 0, from, to: payee, asset: 'native', amount: 200_000n, destinationTag: null },
        { index: 1, from, to: 'bc1q8c6fshw2dlwun7ekn9qwf37cu2rn755upcp6el', asset: 'native', amount: 27_500n, destinationTag: null },
      ],
      fee: 2_500n,
      nonce: null,
      spends: [
        { txHash: funding[0]!.txHash, index: 1 },
        { txHash: funding[1]!.txHash, index: 0 },
      ],
    });
    expect(Transaction.fromHex(signed.raw).getId()).toBe(signed.txHash);
  });

  it('refuses one byte changed in a signature or an amount', () => {
    const withSignatureByteChanged = Transaction.fromHex(signed.raw);
    withSignatureByteChanged.ins[1]!.witness[0]![10]! ^= 0x01; // inside r of the DER signature
    expect(() => decode(withSignatureByteChanged.toHex())).toThrow(InvalidTransactionError);
    const withAmountChanged = Transaction.fromHex(signed.raw);
    withAmountChanged.outs[0]!.value += 1n;
    expect(() => decode(withAmountChanged.toHex())).toThrow('the signature does not verify');
  });

  it('refuses a wrong, unknown or foreign previous output', () => {
    const lyingAbout = (field: Partial<PreviousOutput>) => (txHash: string, index: number) => {
      const previous = previousOutput(txHash, index);
      return previous && index === 0 ? { ...previous, ...field } : previous;
    };
    expect(() => decode(signed.raw, lyingAbout({ amount: 80_001n }))).toThrow('input 1: the signature does not verify');
    expect(() => decode(signed.raw, lyingAbout({ address: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu' }))).toThrow('does not own');
    expect(() => decode(signed.raw, () => undefined)).toThrow('unknown output');
    expect(() => bitcoinTransactions.decodeSignedTransaction(signed.raw, { chain: bitcoin })).toThrow(InvalidTransactionError);
    // on testnet the same previous outputs are not testnet addresses
    expect(() => decode(signed.raw, previousOutput, bitcoinTestnet)).toThrow(InvalidTransactionError);
  });

  it('refuses malformed data', () => {
    for (const raw of ['', 'zz', signed.raw.slice(0, -2), signed.raw + '00', '0x' + signed.raw, signed.raw.slice(1)]) {
      expect(() => decode(raw), raw.slice(0, 20)).toThrow(InvalidTransactionError);
    }
  });

  it('signs on testnet with coin type 1\' keys', () => {
    const wallet = { branch: 'receive', index: 0 } as const;
    const input = { wallet, txHash: txid('testnet-funding'), index: 3, amount: 10_000n };
    const payTo = 'tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7';
    const { raw, txHash } = signer.signBitcoinTransfer(bitcoinTestnet, [input], [{ address: payTo, amount: 9_000n }]);
    const from = 'tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl';
    const decoded = decode(raw, (hash, index) => (hash === input.txHash && index === 3 ? { address: from, amount: 10_000n } : undefined), bitcoinTestnet);
    expect(decoded).toMatchObject({ hash: txHash, from, fee: 1_000n, transfers: [{ index: 0, to: payTo, amount: 9_000n }] });
  });

  it('refuses to sign dust, more out than in, and addresses of the other network', () => {
    const key = root.derivePath("m/84'/0'/0'/0/0").privateKey!;
    const input = { txHash: txid('x'), index: 0, amount: 10_000n, privateKey: key };
    expect(() => signBitcoinTransfer({ network: 'mainnet', inputs: [input], outputs: [{ address: payee, amount: 545n }] })).toThrow('dust');
    expect(signBitcoinTransfer({ network: 'mainnet', inputs: [input], outputs: [{ address: payee, amount: 546n }] }).raw).toMatch(/^02000000/);
    expect(() => signBitcoinTransfer({ network: 'mainnet', inputs: [input], outputs: [{ address: payee, amount: 10_001n }] })).toThrow('do not cover');
    expect(() => signBitcoinTransfer({ network: 'mainnet', inputs: [input], outputs: [{ address: 'tb1q6rz28mcfaxtmd6v789l9rrlrusdprr9pqcpvkl', amount: 9_000n }] })).toThrow(
      'not a Bitcoin mainnet address',
    );
    expect(() => signer.signBitcoinTransfer(findChain('eip155:1')!, funding, outputs)).toThrow('is not a bitcoin chain');
  });
});
