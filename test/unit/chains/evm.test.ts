import { AbiCoder, HDNodeWallet, id, keccak256, SigningKey, Transaction, Wallet } from 'ethers';
import { describe, expect, it } from 'vitest';
import { InvalidTransactionError } from '../../../src/catalog/chain.js';
import { evmAddresses } from '../../../src/chains/evm/address.js';
import { evmTransactions, signEvmTransfer, type EvmTransferParams } from '../../../src/chains/evm/transactions.js';
import { findChain } from '../../../src/catalog/registry.js';
import { createSigner } from '../../../src/chains/signer/signer.js';

const MNEMONIC = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const ethereum = findChain('eip155:1')!;
const polygon = findChain('eip155:137')!;
const signer = createSigner(MNEMONIC);
const depositWallet = { branch: 'receive', index: 0 } as const;
const ethersWallet = (path: string) => HDNodeWallet.fromPhrase(MNEMONIC, undefined, path);
const USDT = '0xdAC17F958D2ee523a2206206994597C13D831ec7';
const RECIPIENT = '0x000000000000000000000000000000000000dEaD';

const fees = { nonce: 7, gasLimit: 21_000n, maxFeePerGas: 30_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n };
const nativeTransfer: EvmTransferParams = { to: RECIPIENT, asset: 'native', amount: 1_234_567_890_123_456_789n, ...fees };
const tokenTransfer: EvmTransferParams = { to: RECIPIENT, asset: USDT, amount: 250_000_000n, ...fees, gasLimit: 65_000n };

const decode = (raw: string, chain = ethereum) => evmTransactions.decodeSignedTransaction(raw, { chain });
const replaceOnce = (raw: string, hex: string, replacement: string) => {
  expect(raw.split(hex)).toHaveLength(2);
  return raw.replace(hex, replacement);
};

describe('EVM addresses', () => {
  it('derives the published BIP44 vector and matches ethers derivation from the mnemonic', () => {
    const xpub = signer.accountXpub('evm', 'mainnet');
    expect(evmAddresses.accountPath('mainnet')).toBe("m/44'/60'/0'");
    expect(evmAddresses.deriveAddress(xpub, 0, 'mainnet')).toBe('0x9858EfFD232B4033E47d90003D41EC34EcaEda94');
    for (const index of [0, 1, 2, 19, 1000, 2 ** 31 - 1]) {
      expect(evmAddresses.deriveAddress(xpub, index, 'mainnet'), `index ${index}`).toBe(ethersWallet(`m/44'/60'/0'/0/${index}`).address);
    }
    // one EVM key space: the testnet address of an index is the mainnet one
    expect(evmAddresses.deriveAddress(signer.accountXpub('evm', 'testnet'), 5, 'testnet')).toBe(ethersWallet("m/44'/60'/0'/0/5").address);
  });

  it('refuses hardened and negative indexes under an xpub', () => {
    const xpub = signer.accountXpub('evm', 'mainnet');
    expect(() => evmAddresses.deriveAddress(xpub, 2 ** 31, 'mainnet')).toThrow();
    expect(() => evmAddresses.deriveAddress(xpub, -1, 'mainnet')).toThrow();
  });

  it('computes the address of a compressed public key', () => {
    const wallet = ethersWallet("m/44'/60'/0'/0/3");
    const compressed = SigningKey.computePublicKey(wallet.publicKey, true);
    expect(evmAddresses.addressFromPublicKey(Buffer.from(compressed.slice(2), 'hex'), 'mainnet')).toBe(wallet.address);
  });

  it('validates addresses: EIP-55 when mixed case, any single case, nothing else', () => {
    const good = [
      '0x9858EfFD232B4033E47d90003D41EC34EcaEda94',
      '0x9858effd232b4033e47d90003d41ec34ecaeda94',
      '0x9858EFFD232B4033E47D90003D41EC34ECAEDA94',
      '0x52908400098527886E0F7030069857D2E4169EE7', // EIP-55's all-caps example
      '0xde709f2102306220921060314715629080e2fb77', // EIP-55's all-lower example
      '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', // EIP-55's mixed-case example
    ];
    const bad = [
      '0x9858EfFD232B4033E47d90003D41EC34EcaEda95', // a mixed-case one with the checksum of another
      '0x9858EfFD232B4033E47d90003D41EC34EcaEdA94', // one letter's case flipped
      '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD',
      '9858EfFD232B4033E47d90003D41EC34EcaEda94',
      '0X9858EFFD232B4033E47D90003D41EC34ECAEDA94',
      '0x9858EfFD232B4033E47d90003D41EC34EcaEda9',
      '0x9858EfFD232B4033E47d90003D41EC34EcaEda9400',
      '0x9858EfFD232B4033E47d90003D41EC34EcaEda9g',
      ' 0x9858EfFD232B4033E47d90003D41EC34EcaEda94',
      'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu',
      'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8',
      '',
    ];
    for (const network of ['mainnet', 'testnet'] as const) {
      for (const address of good) expect(evmAddresses.isValidAddress(address, network), `${address} on ${network}`).toBe(true);
      for (const address of bad) expect(evmAddresses.isValidAddress(address, network), `${address} on ${network}`).toBe(false);
    }
  });
});

describe('EVM transactions', () => {
  const sender = '0x9858EfFD232B4033E47d90003D41EC34EcaEda94';

  it('a native transfer signed by the signer decodes to exactly that transfer', () => {
    const raw = signer.signEvmTransfer(ethereum, depositWallet, nativeTransfer);
    expect(decode(raw)).toEqual({
      hash: keccak256(raw),
      from: sender,
      transfers: [{ index: 0, from: sender, to: RECIPIENT, asset: 'native', amount: 1_234_567_890_123_456_789n, destinationTag: null }],
      fee: 21_000n * 30_000_000_000n,
      nonce: 7,
      spends: [],
    });
    // an independent parse: type 2, Ethereum's chain id, the fee parameters as asked
    const parsed = Transaction.from(raw);
    expect([parsed.type, parsed.chainId, parsed.maxPriorityFeePerGas, parsed.data]).toEqual([2, 1n, 1_000_000_000n, '0x']);
  });

  it('an ERC-20 transfer signed by the signer decodes to exactly that token transfer', () => {
    const raw = signer.signEvmTransfer(ethereum, depositWallet, tokenTransfer);
    const parsed = Transaction.from(raw);
    expect(parsed.to).toBe(USDT);
    expect(parsed.value).toBe(0n);
    expect(parsed.data).toBe(id('transfer(address,uint256)').slice(0, 10) + AbiCoder.defaultAbiCoder().encode(['address', 'uint256'], [RECIPIENT, 250_000_000n]).slice(2));
    expect(decode(raw)).toEqual({
      hash: keccak256(raw),
      from: sender,
      transfers: [{ index: 0, from: sender, to: RECIPIENT, asset: USDT.toLowerCase(), amount: 250_000_000n, destinationTag: null }],
      fee: 65_000n * 30_000_000_000n,
      nonce: 7,
      spends: [],
    });
  });

  it('signs for the chain it is given (EIP-155 id of Polygon) and with the key the family function is handed', () => {
    const key = ethersWallet("m/44'/60'/0'/0/4").privateKey;
    const raw = signEvmTransfer(Buffer.from(key.slice(2), 'hex'), { ...nativeTransfer, chainId: 137 });
    expect(Transaction.from(raw).chainId).toBe(137n);
    expect(decode(raw, polygon).from).toBe(ethersWallet("m/44'/60'/0'/0/4").address);
  });

  it('refuses a transaction for another chain id', () => {
    const raw = signer.signEvmTransfer(polygon, depositWallet, nativeTransfer);
    expect(() => decode(raw, ethereum)).toThrow(InvalidTransactionError);
    expect(() => decode(raw, ethereum)).toThrow('chain id 137, not 1');
  });

  it('refuses a tampered signature, unsigned and malformed data', () => {
    const raw = signer.signEvmTransfer(ethereum, depositWallet, nativeTransfer);
    const s = raw.slice(-64);
    const r = raw.slice(-64 - 2 - 64, -64 - 2);
    // s's first byte raised above n/2 (non-canonical), or r raised past the curve order
    expect(() => decode(raw.slice(0, -64) + 'ff' + s.slice(2))).toThrow(InvalidTransactionError);
    expect(() => decode(replaceOnce(raw, r, 'ff'.repeat(32)))).toThrow(InvalidTransactionError);
    const unsigned = Transaction.from({ type: 2, chainId: 1, to: RECIPIENT, value: 1n, ...fees }).unsignedSerialized;
    for (const malformed of [unsigned, raw.slice(0, -2), raw + '00', '0x', '', 'not hex', '0x02c0']) {
      expect(() => decode(malformed), malformed).toThrow(InvalidTransactionError);
    }
  });

  it('a changed amount no longer recovers the sender: the signature belongs to no account that signed it', () => {
    const raw = signer.signEvmTransfer(ethereum, depositWallet, nativeTransfer);
    const tampered = replaceOnce(raw, '112210f47de98115', '122210f47de98115');
    const decoded = decode(tampered);
    expect(decoded.transfers[0]!.amount).toBe(0x122210f47de98115n);
    expect(decoded.from).not.toBe(sender);
  });

  it('other call data is a valid transaction without transfers', async () => {
    const wallet = Wallet.fromPhrase(MNEMONIC);
    const approve = id('approve(address,uint256)').slice(0, 10) + AbiCoder.defaultAbiCoder().encode(['address', 'uint256'], [RECIPIENT, 5n]).slice(2);
    const raw = await wallet.signTransaction({ type: 2, chainId: 1, to: USDT, value: 0n, data: approve, ...fees });
    expect(decode(raw)).toMatchObject({ from: sender, transfers: [], nonce: 7, fee: 630_000_000_000_000n });
  });

  it('a legacy EIP-155 transaction is decoded with gasPrice as its fee price', async () => {
    const wallet = Wallet.fromPhrase(MNEMONIC);
    const raw = await wallet.signTransaction({ type: 0, chainId: 1, to: RECIPIENT, value: 3n, nonce: 1, gasLimit: 21_000n, gasPrice: 10n });
    expect(decode(raw)).toMatchObject({ from: sender, fee: 210_000n, transfers: [{ to: RECIPIENT, amount: 3n, asset: 'native' }] });
  });

  it('the signer refuses a non-EVM chain and a non-positive amount', () => {
    expect(() => signer.signEvmTransfer(findChain('bip122:000000000019d6689c085ae165831e93')!, depositWallet, nativeTransfer)).toThrow('is not a evm chain');
    expect(() => signer.signEvmTransfer(ethereum, depositWallet, { ...nativeTransfer, amount: 0n })).toThrow(RangeError);
  });
});
