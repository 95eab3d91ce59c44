import { createHash } from 'node:crypto';
import ecc from '@bitcoinerlab/secp256k1';
import { BIP32Factory } from 'bip32';
import { mnemonicToSeedSync } from 'bip39';
import { TronWeb, utils } from 'tronweb';
import { describe, expect, it } from 'vitest';
import { InvalidTransactionError, type DecodeContext } from '../../../src/catalog/chain.js';
import { findChain } from '../../../src/catalog/registry.js';
import { tronAddresses } from '../../../src/chains/tron/address.js';
import { signTronTransfer, tronTransactions, type TronTransferParams } from '../../../src/chains/tron/transactions.js';

/** The public BIP39 test mnemonic: nobody may hold funds behind it. */
const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const root = BIP32Factory(ecc).fromSeed(mnemonicToSeedSync(MNEMONIC));
const account = root.derivePath(tronAddresses.accountPath('mainnet'));
const accountXpub = account.neutered().toBase58();
const receiveKey = (index: number) => account.derive(0).derive(index).privateKey!;
const otherKey = root.derivePath("m/44'/195'/1'/0/0").privateKey!;

const USDT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const ME = 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH';
const RECIPIENT = 'TCwwZeH6so1X4R5kcdbKqa4GWuzF53xPqG';
const mainnet: DecodeContext = { chain: findChain('tron:0x00000000000000000000000000000000')! };
const shasta: DecodeContext = { chain: findChain('tron:shasta')! };

const refBlock = { number: 0x487c, hash: `0000000000000000${'0608af18f6ec6c83'}${'00'.repeat(16)}` };
const timing = { refBlock, timestamp: 1709604460687, expiration: 1709604519000 };
/** every decoding in these tests also checks that the hash taken from the bytes alone is the decoding's */
const decode = (raw: string, context = mainnet) => {
  const decoded = tronTransactions.decodeSignedTransaction(raw, context);
  expect(tronTransactions.hashOfSigned!(raw)).toBe(decoded.hash);
  return decoded;
};
const sha256Hex = (hex: string) => createHash('sha256').update(Buffer.from(hex, 'hex')).digest('hex');

describe('Tron addresses', () => {
  it('derive the published address of the test mnemonic at m/44\'/195\'/0\'/0/0, as tronweb does', () => {
    // TUEZSd… is the Tron Ledger app's test-case address for this mnemonic (and Ian Coleman's BIP39 tool's)
    expect(accountXpub.startsWith('xpub')).toBe(true);
    expect(tronAddresses.deriveAddress(accountXpub, 0, 'mainnet')).toBe(ME);
    expect(TronWeb.fromMnemonic(MNEMONIC, "m/44'/195'/0'/0/0").address).toBe(ME);
    expect(tronAddresses.deriveAddress(accountXpub, 1, 'mainnet')).toBe('TSeJkUh4Qv67VNFwY8LaAxERygNdy6NQZK');
  });

  it('use one account path, and one address format, on mainnet and Shasta', () => {
    expect(tronAddresses.accountPath('mainnet')).toBe("m/44'/195'/0'");
    expect(tronAddresses.accountPath('testnet')).toBe("m/44'/195'/0'");
    expect(tronAddresses.deriveAddress(accountXpub, 3, 'testnet')).toBe(tronAddresses.deriveAddress(accountXpub, 3, 'mainnet'));
  });

  it.each([0, 1, 2, 7, 1000, 2 ** 31 - 1])('derive from the xpub what the private key of receive child %i gives', (index) => {
    const fromXpub = tronAddresses.deriveAddress(accountXpub, index, 'mainnet');
    expect(fromXpub).toBe(TronWeb.address.fromPrivateKey(Buffer.from(receiveKey(index)).toString('hex')));
    expect(tronAddresses.addressFromPublicKey(account.derive(0).derive(index).publicKey, 'mainnet')).toBe(fromXpub);
    if (index < 5) expect(TronWeb.fromMnemonic(MNEMONIC, `m/44'/195'/0'/0/${index}`).address).toBe(fromXpub);
  });

  it('refuse hardened or negative indexes and a private extended key', () => {
    expect(() => tronAddresses.deriveAddress(accountXpub, 2 ** 31, 'mainnet')).toThrow(RangeError);
    expect(() => tronAddresses.deriveAddress(accountXpub, -1, 'mainnet')).toThrow(RangeError);
    expect(() => tronAddresses.deriveAddress(account.toBase58(), 0, 'mainnet')).toThrow('private');
  });

  const table: [string, string, boolean][] = [
    ['the test account', ME, true],
    ["USDT's contract", USDT, true],
    ['another account', RECIPIENT, true],
    ['the hex form of an address', '41e825d52582eec346c839b4875376117904a76cbc', false],
    ['the 0x form of an address', '0xe825d52582eec346c839b4875376117904a76cbc', false],
    ['a bad checksum', 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdJ', false],
    ['one character short', ME.slice(0, -1), false],
    ['surrounding whitespace', ` ${ME}`, false],
    ['a Bitcoin base58check address', '1LqBGSKuX5yYUonjxT5qGfpUsXKYYWeabA', false],
    ['an Ethereum address', '0x9858EfFD232B4033E47d90003D41EC34EcaEda94', false],
    ['garbage', 'T-not-an-address', false],
    ['the empty string', '', false],
  ];
  it.each(table)('validate %s (%s) as %s on both networks', (_name, address, valid) => {
    expect(tronAddresses.isValidAddress(address, 'mainnet')).toBe(valid);
    expect(tronAddresses.isValidAddress(address, 'testnet')).toBe(valid);
  });
});

describe('Tron transactions', () => {
  const trx: TronTransferParams = { to: RECIPIENT, amount: 10n, ...timing };
  const trc20: TronTransferParams = { to: RECIPIENT, amount: 12_345_678n, trc20: { contract: USDT, feeLimit: 30_000_000n }, ...timing };

  it('encode and sign as a published TRX transfer vector of the test mnemonic', () => {
    // a Go wallet SDK's TestWalletShouldSignTransactionTrx: this raw_data (10 sun to TCwwZe…, from an owner 41e825…) signed
    // by m/44'/195'/0'/0/0 of the test mnemonic; RFC 6979 makes the signature deterministic
    const publishedOwner = '41e825d52582eec346c839b4875376117904a76cbc';
    const publishedRaw =
      '0a02487c22080608af18f6ec6c8340d8f8fae2e0315a65080112610a2d747970652e676f6f676c65617069732e636f6d2f70726f746f636f6c2e5472616e73666572436f6e747261637412300a1541e825d52582eec346c839b4875376117904a76cbc12154120ab1300cf70c048e4cf5d5b1b33f59653ed6626180a708fb1f7e2e031';
    const publishedRs =
      'e8469947140bdaff5cce4000e60a3bd95ca3de551870a450ce51ab41acfefe8b009e7ca1caaad63efdae94332f6282ef8766471236849511e70d7b1c22c15f7b';
    // tronweb's signing util, our key: the vector's signature (it writes the recovery id as 01, tronweb as 27 + 1)
    const txID = sha256Hex(publishedRaw);
    expect(utils.crypto.signTransaction(Buffer.from(receiveKey(0)).toString('hex'), { txID }).signature).toEqual([`${publishedRs}1C`]);
    // our transfer is that raw_data field for field, with our account as the owner
    const signed = JSON.parse(signTronTransfer(receiveKey(0), trx));
    expect(signed.signature).toEqual([expect.stringMatching(/^[0-9a-f]{128}1[bc]$/)]);
    expect(signed.raw_data_hex).toBe(publishedRaw.replace(publishedOwner.slice(2), TronWeb.address.toHex(ME).slice(2)));
    expect(signed.txID).toBe(sha256Hex(signed.raw_data_hex));
    // and the published transaction itself is refused: its signer is not its owner
    const published = { txID, raw_data: utils.deserializeTx.deserializeTransaction('TransferContract', publishedRaw), raw_data_hex: publishedRaw, signature: [`${publishedRs}01`] };
    expect(() => decode(JSON.stringify(published))).toThrow('not by the owner');
  });

  it('decode a signed TRX transfer to exactly the transfer asked for', () => {
    const raw = signTronTransfer(receiveKey(0), trx);
    expect(decode(raw)).toEqual({
      hash: JSON.parse(raw).txID,
      from: ME,
      transfers: [{ index: 0, from: ME, to: RECIPIENT, asset: 'native', amount: 10n, destinationTag: null }],
      fee: 0n,
      nonce: null,
      spends: [],
    });
    expect(decode(raw, shasta).transfers[0]!.amount).toBe(10n);
  });

  it('decode a signed TRC-20 transfer on USDT to its token, recipient, amount and fee limit', () => {
    const raw = signTronTransfer(receiveKey(0), trc20);
    const signed = JSON.parse(raw);
    expect(signed.raw_data.contract[0].parameter.value.data).toBe(
      `a9059cbb000000000000000000000000${TronWeb.address.toHex(RECIPIENT).slice(2)}${(12_345_678).toString(16).padStart(64, '0')}`,
    );
    expect(signed.raw_data.fee_limit).toBe(30_000_000);
    expect(decode(raw)).toEqual({
      hash: signed.txID,
      from: ME,
      transfers: [{ index: 0, from: ME, to: RECIPIENT, asset: USDT, amount: 12_345_678n, destinationTag: null }],
      fee: 30_000_000n,
      nonce: null,
      spends: [],
    });
  });

  it('derive the reference block fields as tronweb does (last 2 bytes of the height, bytes 8–16 of the id)', () => {
    const hash = '0000000003a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c';
    const signed = JSON.parse(signTronTransfer(receiveKey(0), { ...trx, refBlock: { number: 61_000_123, hash } }));
    expect(signed.raw_data.ref_block_bytes).toBe((61_000_123).toString(16).slice(-4));
    expect(signed.raw_data.ref_block_hash).toBe('d5e6f708192a3b4c');
  });

  it('refuse to sign what cannot be sent as asked', () => {
    expect(() => signTronTransfer(receiveKey(0), { ...trx, amount: 0n })).toThrow(RangeError);
    expect(() => signTronTransfer(receiveKey(0), { ...trx, amount: 2n ** 53n })).toThrow(RangeError);
    expect(() => signTronTransfer(receiveKey(0), { ...trx, to: '41e825d52582eec346c839b4875376117904a76cbc' })).toThrow('not a Tron address');
    expect(() => signTronTransfer(receiveKey(0), { ...trc20, trc20: { contract: USDT, feeLimit: 0n } })).toThrow(RangeError);
    expect(() => signTronTransfer(receiveKey(0), { ...trx, expiration: trx.timestamp })).toThrow(RangeError);
  });

  /** the JSON signTronTransfer returns, as far as these tests edit it */
  interface SignedJson {
    txID: string;
    raw_data: RawDataJson;
    raw_data_hex: string;
    signature: string[];
  }
  interface RawDataJson {
    contract: [{ type: string; Permission_id?: number; parameter: { value: { amount?: number; data: string; call_value?: number } } }];
  }

  /** re-signs edited raw_data with `key`, keeping everything consistent but the signer */
  const resign = (raw: string, edit: (rawData: RawDataJson) => void, key = receiveKey(0)) => {
    const tx: SignedJson = JSON.parse(raw);
    edit(tx.raw_data);
    const raw_data_hex = utils.transaction.txPbToRawDataHex(utils.transaction.txJsonToPb({ raw_data: tx.raw_data })).toLowerCase();
    const txID = sha256Hex(raw_data_hex);
    const { signature } = utils.crypto.signTransaction(Buffer.from(key).toString('hex'), { txID, raw_data: tx.raw_data, raw_data_hex });
    return JSON.stringify({ txID, raw_data: tx.raw_data, raw_data_hex, signature });
  };
  const tamper = (raw: string, edit: (tx: SignedJson) => void) => {
    const tx: SignedJson = JSON.parse(raw);
    edit(tx);
    return JSON.stringify(tx);
  };

  it('accept the resign helper\'s output when nothing changes (so the refusals below are about the change)', () => {
    const raw = signTronTransfer(receiveKey(0), trx);
    expect(decode(resign(raw, () => {}))).toEqual(decode(raw));
  });

  it.each<[string, () => string, string]>([
    ['the amount changed in raw_data only', () => tamper(signTronTransfer(receiveKey(0), trx), (tx) => (tx.raw_data.contract[0].parameter.value.amount = 11)), 'raw_data does not match'],
    [
      'the amount changed, raw_data_hex and txID recomputed',
      () => {
        const tx: SignedJson = JSON.parse(signTronTransfer(receiveKey(0), trx));
        tx.raw_data.contract[0].parameter.value.amount = 1_000_000;
        tx.raw_data_hex = utils.transaction.txPbToRawDataHex(utils.transaction.txJsonToPb({ raw_data: tx.raw_data })).toLowerCase();
        tx.txID = sha256Hex(tx.raw_data_hex);
        return JSON.stringify(tx);
      },
      'not by the owner',
    ],
    ['a changed txID', () => tamper(signTronTransfer(receiveKey(0), trx), (tx) => (tx.txID = sha256Hex('00'))), 'txID is not the sha256'],
    ['a changed signature', () => tamper(signTronTransfer(receiveKey(0), trx), (tx) => (tx.signature[0] = `11${tx.signature[0]!.slice(2)}`)), 'not by the owner'],
    ['a signature by another key', () => resign(signTronTransfer(receiveKey(0), trx), () => {}, otherKey), 'not by the owner'],
    ['two signatures', () => tamper(signTronTransfer(receiveKey(0), trx), (tx) => tx.signature.push(tx.signature[0]!)), 'not a signed Tron transaction'],
    ['no signature', () => tamper(signTronTransfer(receiveKey(0), trx), (tx) => (tx.signature = [])), 'not a signed Tron transaction'],
    ['another TRC-20 method (approve)', () => resign(signTronTransfer(receiveKey(0), trc20), (rawData) => {
      const value = rawData.contract[0].parameter.value;
      value.data = `095ea7b3${value.data.slice(8)}`;
    }), 'not a TRC-20 transfer'],
    ['trailing call data', () => resign(signTronTransfer(receiveKey(0), trc20), (rawData) => (rawData.contract[0].parameter.value.data += '00')), 'not a TRC-20 transfer'],
    ['TRX sent along a TRC-20 call', () => resign(signTronTransfer(receiveKey(0), trc20), (rawData) => (rawData.contract[0].parameter.value.call_value = 5)), 'sends no TRX'],
    ['another permission than the owner\'s', () => resign(signTronTransfer(receiveKey(0), trx), (rawData) => (rawData.contract[0].Permission_id = 2)), 'owner-permission'],
    ['another contract type', () => tamper(signTronTransfer(receiveKey(0), trx), (tx) => (tx.raw_data.contract[0].type = 'TransferAssetContract')), 'not a signed Tron transaction'],
    ['not JSON', () => 'deadbeef', 'not JSON'],
    ['an empty object', () => '{}', 'not a signed Tron transaction'],
  ])('refuse %s', (_name, make, message) => {
    const raw = make();
    expect(() => decode(raw)).toThrow(InvalidTransactionError);
    expect(() => decode(raw)).toThrow(message);
  });

  it('take a signed transaction\'s hash from its raw_data_hex alone, and refuse what has none', () => {
    const raw = signTronTransfer(receiveKey(0), trc20);
    expect(tronTransactions.hashOfSigned!(raw)).toBe(sha256Hex(JSON.parse(raw).raw_data_hex));
    expect(() => tronTransactions.hashOfSigned!('{')).toThrow(InvalidTransactionError);
    expect(() => tronTransactions.hashOfSigned!(JSON.stringify({ txID: JSON.parse(raw).txID }))).toThrow('not a signed Tron transaction');
    expect(() => tronTransactions.hashOfSigned!(JSON.stringify({ raw_data_hex: 'zz' }))).toThrow(InvalidTransactionError);
  });

  it('refuse to decode for a chain of another family', () => {
    const raw = signTronTransfer(receiveKey(0), trx);
    expect(() => decode(raw, { chain: findChain('xrpl:mainnet')! })).toThrow(InvalidTransactionError);
  });
});
