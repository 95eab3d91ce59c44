import ecc from '@bitcoinerlab/secp256k1';
import { BIP32Factory } from 'bip32';
import { mnemonicToSeedSync } from 'bip39';
import { decode, encode, Wallet, type Payment, type Transaction } from 'xrpl';
import { describe, expect, it } from 'vitest';
import { InvalidTransactionError, type DecodeContext } from '../../../src/catalog/chain.js';
import { findChain } from '../../../src/catalog/registry.js';
import { parseXrpRecipient, xrpAddresses } from '../../../src/chains/xrp/address.js';
import { signXrpPayment, xrpTransactions, type XrpPaymentParams } from '../../../src/chains/xrp/transactions.js';

/** The public BIP39 test mnemonic: nobody may hold funds behind it. */
const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const root = BIP32Factory(ecc).fromSeed(mnemonicToSeedSync(MNEMONIC));
const account = root.derivePath(xrpAddresses.accountPath('mainnet'));
const accountXpub = account.neutered().toBase58();
const receiveKey = (index: number) => account.derive(0).derive(index).privateKey!;
const walletOfKey = (key: Uint8Array) =>
  new Wallet(Buffer.from(ecc.pointFromScalar(key, true)!).toString('hex').toUpperCase(), `00${Buffer.from(key).toString('hex').toUpperCase()}`);

/** m/44'/144'/0'/0/0 of the test mnemonic: the address Ledger Live and Ripple's Xpring SDK publish for it */
const ME = 'rHsMGQEkVNJmpGWs8XUBoTBiAAbwxZN5v3';
const BOB = 'r9cZA1mLK5R5Am25ArfXFmqgNwjZgnfk59';
const mainnet: DecodeContext = { chain: findChain('xrpl:mainnet')! };
const testnet: DecodeContext = { chain: findChain('xrpl:testnet')! };
const decodeTx = (blob: string, context = mainnet) => xrpTransactions.decodeSignedTransaction(blob, context);

describe('XRP addresses', () => {
  it('derive the published address of the test mnemonic, as xrpl\'s Wallet.fromMnemonic does', () => {
    expect(accountXpub.startsWith('xpub')).toBe(true);
    expect(xrpAddresses.deriveAddress(accountXpub, 0, 'mainnet')).toBe(ME);
    expect(Wallet.fromMnemonic(MNEMONIC).classicAddress).toBe(ME);
    expect(xrpAddresses.deriveAddress(accountXpub, 1, 'mainnet')).toBe('r3AgF9mMBFtaLhKcg96weMhbbEFLZ3mx17');
  });

  it('use one account path on mainnet and testnet', () => {
    expect(xrpAddresses.accountPath('mainnet')).toBe("m/44'/144'/0'");
    expect(xrpAddresses.accountPath('testnet')).toBe("m/44'/144'/0'");
    expect(xrpAddresses.deriveAddress(accountXpub, 4, 'testnet')).toBe(xrpAddresses.deriveAddress(accountXpub, 4, 'mainnet'));
  });

  it.each([0, 1, 2, 9, 1000, 2 ** 31 - 1])('derive from the xpub what the private key of receive child %i gives', (index) => {
    const fromXpub = xrpAddresses.deriveAddress(accountXpub, index, 'mainnet');
    expect(fromXpub).toBe(walletOfKey(receiveKey(index)).classicAddress);
    expect(xrpAddresses.addressFromPublicKey(account.derive(0).derive(index).publicKey, 'mainnet')).toBe(fromXpub);
    if (index < 3) expect(Wallet.fromMnemonic(MNEMONIC, { derivationPath: `m/44'/144'/0'/0/${index}` }).classicAddress).toBe(fromXpub);
  });

  it('refuse hardened indexes, private extended keys and uncompressed public keys', () => {
    expect(() => xrpAddresses.deriveAddress(accountXpub, 2 ** 31, 'mainnet')).toThrow(RangeError);
    expect(() => xrpAddresses.deriveAddress(account.toBase58(), 0, 'mainnet')).toThrow('private');
    expect(() => xrpAddresses.addressFromPublicKey(ecc.pointCompress(account.publicKey, false), 'mainnet')).toThrow('compressed');
  });

  // X-addresses from ripple-address-codec's test vectors (r9cZA1… untagged; rGWrZy… with tag 4294967295)
  const table: [string, string, { mainnet: boolean; testnet: boolean }][] = [
    ['a classic address', ME, { mainnet: true, testnet: true }],
    ['another classic address', BOB, { mainnet: true, testnet: true }],
    ['a mainnet X-address', 'X7AcgcsBL6XDcUb289X4mJ8djcdyKaB5hJDWMArnXr61cqZ', { mainnet: true, testnet: false }],
    ['a mainnet X-address with a tag', 'XVLhHMPHU98es4dbozjVtdWzVrDjtV18pX8yuPT7y4xaEHi', { mainnet: true, testnet: false }],
    ['a testnet X-address', 'T719a5UwUCnEs54UsxG9CJYYDhwmFCqkr7wxCcNcfZ6p5GZ', { mainnet: false, testnet: true }],
    ['a classic address with a bad checksum', 'rHsMGQEkVNJmpGWs8XUBoTBiAAbwxZN5v4', { mainnet: false, testnet: false }],
    ['an X-address with a bad checksum', 'X7AcgcsBL6XDcUb289X4mJ8djcdyKaB5hJDWMArnXr61cqY', { mainnet: false, testnet: false }],
    ['a Tron address', 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH', { mainnet: false, testnet: false }],
    ['an Ethereum address', '0x9858EfFD232B4033E47d90003D41EC34EcaEda94', { mainnet: false, testnet: false }],
    ['surrounding whitespace', `${ME} `, { mainnet: false, testnet: false }],
    ['garbage', 'r-not-an-address', { mainnet: false, testnet: false }],
    ['the empty string', '', { mainnet: false, testnet: false }],
  ];
  it.each(table)('validate %s (%s) as %o', (_name, address, valid) => {
    expect(xrpAddresses.isValidAddress(address, 'mainnet')).toBe(valid.mainnet);
    expect(xrpAddresses.isValidAddress(address, 'testnet')).toBe(valid.testnet);
  });

  it('parse a recipient into its account and the tag an X-address carries', () => {
    expect(parseXrpRecipient(ME, 'mainnet')).toEqual({ classicAddress: ME, tag: null });
    expect(parseXrpRecipient(ME, 'testnet')).toEqual({ classicAddress: ME, tag: null });
    expect(parseXrpRecipient('X7AcgcsBL6XDcUb289X4mJ8djcdyKaB5hJDWMArnXr61cqZ', 'mainnet')).toEqual({ classicAddress: BOB, tag: null });
    expect(parseXrpRecipient('XVLhHMPHU98es4dbozjVtdWzVrDjtV18pX8yuPT7y4xaEHi', 'mainnet')).toEqual({
      classicAddress: 'rGWrZyQqhTp9Xu7G5Pkayo7bXjH4k4QYpf',
      tag: 4294967295,
    });
    expect(parseXrpRecipient('XVMFQQBMhdouRqhPMuawgBMN1AVFToDJjGL3vhmPNrNxcgS', 'mainnet')).toEqual({ classicAddress: ME, tag: 12345 });
    expect(parseXrpRecipient('T719a5UwUCnEs54UsxG9CJYYDhwmFCqkr7wxCcNcfZ6p5GZ', 'testnet')).toEqual({ classicAddress: BOB, tag: null });
    expect(() => parseXrpRecipient('T719a5UwUCnEs54UsxG9CJYYDhwmFCqkr7wxCcNcfZ6p5GZ', 'mainnet')).toThrow('not an XRP address on mainnet');
    expect(() => parseXrpRecipient('XVLhHMPHU98es4dbozjVtdWzVrDjtV18pX8yuPT7y4xaEHi', 'testnet')).toThrow('not an XRP address on testnet');
    expect(() => parseXrpRecipient('', 'mainnet')).toThrow('not an XRP address');
  });
});

describe('XRP transactions', () => {
  const payment: XrpPaymentParams = {
    account: ME,
    destination: BOB,
    amountDrops: 25_000_000n,
    destinationTag: 4_000_000_123,
    fee: 12n,
    sequence: 7,
    lastLedgerSequence: 90_000_000,
  };
  const asXrplPayment = (params: XrpPaymentParams): Payment => ({
    TransactionType: 'Payment',
    Account: params.account,
    Destination: params.destination,
    Amount: params.amountDrops.toString(),
    Fee: params.fee.toString(),
    Sequence: params.sequence,
    LastLedgerSequence: params.lastLedgerSequence,
    Flags: 0,
    ...(params.destinationTag !== undefined ? { DestinationTag: params.destinationTag } : {}),
  });

  it('sign exactly what xrpl\'s Wallet.fromMnemonic signs, and decode it to the payment asked for', () => {
    const blob = signXrpPayment(receiveKey(0), payment);
    const reference = Wallet.fromMnemonic(MNEMONIC).sign(asXrplPayment(payment));
    expect(blob).toBe(reference.tx_blob);
    expect(decodeTx(blob)).toEqual({
      hash: reference.hash,
      from: ME,
      transfers: [{ index: 0, from: ME, to: BOB, asset: 'native', amount: 25_000_000n, destinationTag: 4_000_000_123 }],
      fee: 12n,
      nonce: 7,
      spends: [],
    });
    expect(decodeTx(blob, testnet).hash).toBe(reference.hash);
  });

  it('decode a payment without a destination tag to a null tag', () => {
    const blob = signXrpPayment(receiveKey(0), { ...payment, destinationTag: undefined });
    expect(decodeTx(blob).transfers).toEqual([{ index: 0, from: ME, to: BOB, asset: 'native', amount: 25_000_000n, destinationTag: null }]);
  });

  it('refuse to sign what cannot be sent as asked', () => {
    expect(() => signXrpPayment(receiveKey(1), payment)).toThrow('not rHsMGQ');
    expect(() => signXrpPayment(receiveKey(0), { ...payment, destination: 'X7AcgcsBL6XDcUb289X4mJ8djcdyKaB5hJDWMArnXr61cqZ' })).toThrow('classic');
    expect(() => signXrpPayment(receiveKey(0), { ...payment, amountDrops: 0n })).toThrow(RangeError);
    expect(() => signXrpPayment(receiveKey(0), { ...payment, amountDrops: 10n ** 17n + 1n })).toThrow(RangeError);
    expect(() => signXrpPayment(receiveKey(0), { ...payment, destinationTag: 2 ** 32 })).toThrow(RangeError);
    expect(() => signXrpPayment(receiveKey(0), { ...payment, networkId: 1 })).toThrow(RangeError);
  });

  const signedByMe = (tx: Record<string, unknown>) => Wallet.fromMnemonic(MNEMONIC).sign(tx as unknown as Transaction).tx_blob;
  const reencoded = (blob: string, edit: (fields: Record<string, unknown>) => void) => {
    const fields = decode(blob);
    edit(fields);
    return encode(fields as unknown as Transaction);
  };

  it.each<[string, () => string, string]>([
    ['a changed amount', () => reencoded(signXrpPayment(receiveKey(0), payment), (fields) => (fields.Amount = '26000000')), 'does not verify'],
    ['a changed destination tag', () => reencoded(signXrpPayment(receiveKey(0), payment), (fields) => (fields.DestinationTag = 1)), 'does not verify'],
    [
      'a changed signature',
      () => reencoded(signXrpPayment(receiveKey(0), payment), (fields) => {
        const signature = fields.TxnSignature as string;
        fields.TxnSignature = signature.slice(0, -2) + (signature.endsWith('00') ? '01' : '00');
      }),
      'signature',
    ],
    [
      'a signature by another key (its own public key, our account)',
      () => walletOfKey(receiveKey(1)).sign(asXrplPayment(payment)).tx_blob,
      'master key',
    ],
    ['an issued-currency amount', () => signedByMe({ ...asXrplPayment(payment), Amount: { currency: 'USD', issuer: BOB, value: '5' } }), 'not an amount of XRP drops'],
    ['a partial payment', () => signedByMe({ ...asXrplPayment(payment), Flags: 0x00020000 }), 'partial payments'],
    ['another transaction type', () => signedByMe({ TransactionType: 'AccountSet', Account: ME, Fee: '12', Sequence: 7 }), 'not a Payment'],
    ['a NetworkID on mainnet/testnet', () => signedByMe({ ...asXrplPayment(payment), NetworkID: 1 }), 'NetworkID'],
    ['an unsigned payment', () => encode(asXrplPayment(payment)), 'no signing key'],
    ['trailing bytes', () => `${signXrpPayment(receiveKey(0), payment)}00`, 'malformed'],
    ['garbage', () => 'not hex', 'hex'],
    ['the empty string', () => '', 'hex'],
  ])('refuse %s', (_name, make, message) => {
    const blob = make();
    expect(() => decodeTx(blob)).toThrow(InvalidTransactionError);
    expect(() => decodeTx(blob)).toThrow(message);
  });

  it('refuse to decode for a chain of another family', () => {
    expect(() => decodeTx(signXrpPayment(receiveKey(0), payment), { chain: findChain('tron:shasta')! })).toThrow(InvalidTransactionError);
  });
});
