import ecc from '@bitcoinerlab/secp256k1';
import { decode, deriveAddress, encode, hashes, isValidClassicAddress, verifySignature, Wallet, type Payment } from 'xrpl';
import { InvalidTransactionError, type DecodedTransaction, type TransactionCodec } from '../../catalog/chain.js';

export interface XrpPaymentParams {
  /** classic address of the signing key (checked) */
  account: string;
  /** classic address; an X-address is split by parseXrpRecipient first */
  destination: string;
  amountDrops: bigint;
  destinationTag?: number;
  fee: bigint;
  sequence: number;
  lastLedgerSequence: number;
  /** only for networks whose id is above 1024: rippled refuses a NetworkID on mainnet (0) and testnet (1) */
  networkId?: number;
}

/** 100 billion XRP: no XRP amount can be larger */
const MAX_DROPS = 10n ** 17n;
const UINT32_MAX = 0xffffffff;
const TF_PARTIAL_PAYMENT = 0x00020000;
const LEGACY_NETWORK_ID_LIMIT = 1024;
const DROPS = /^\d{1,18}$/;

const isUint32 = (value: number) => Number.isInteger(value) && value >= 0 && value <= UINT32_MAX;

const walletOf = (privateKey: Uint8Array): Wallet => {
  if (privateKey.length !== 32) throw new Error('a secp256k1 private key has 32 bytes');
  const publicKey = ecc.pointFromScalar(privateKey, true);
  if (!publicKey) throw new Error('not a valid secp256k1 private key');
  // xrpl marks a secp256k1 private key by a leading 00 byte (ed25519 ones start with ED)
  return new Wallet(Buffer.from(publicKey).toString('hex').toUpperCase(), `00${Buffer.from(privateKey).toString('hex').toUpperCase()}`);
};

/** Builds and signs an XRP-to-XRP Payment; returns its tx_blob (hex). */
export const signXrpPayment = (privateKey: Uint8Array, params: XrpPaymentParams): string => {
  const wallet = walletOf(privateKey);
  if (wallet.classicAddress !== params.account) throw new Error(`the key signs for ${wallet.classicAddress}, not ${params.account}`);
  if (!isValidClassicAddress(params.destination)) throw new Error(`not a classic XRP address: ${params.destination}`);
  if (params.amountDrops <= 0n || params.amountDrops > MAX_DROPS) throw new RangeError(`bad XRP amount: ${params.amountDrops} drops`);
  if (params.fee <= 0n || params.fee > MAX_DROPS) throw new RangeError(`bad fee: ${params.fee} drops`);
  for (const [name, value] of Object.entries({ sequence: params.sequence, lastLedgerSequence: params.lastLedgerSequence })) {
    if (!isUint32(value)) throw new RangeError(`${name} must be a 32-bit unsigned integer`);
  }
  if (params.destinationTag !== undefined && !isUint32(params.destinationTag)) throw new RangeError('the destination tag must be a 32-bit unsigned integer');
  if (params.networkId !== undefined && (!isUint32(params.networkId) || params.networkId <= LEGACY_NETWORK_ID_LIMIT)) {
    throw new RangeError('a NetworkID is only for networks whose id is above 1024');
  }
  const payment: Payment = {
    TransactionType: 'Payment',
    Account: params.account,
    Destination: params.destination,
    Amount: params.amountDrops.toString(),
    Fee: params.fee.toString(),
    Sequence: params.sequence,
    LastLedgerSequence: params.lastLedgerSequence,
    Flags: 0,
    ...(params.destinationTag !== undefined ? { DestinationTag: params.destinationTag } : {}),
    ...(params.networkId !== undefined ? { NetworkID: params.networkId } : {}),
  };
  return wallet.sign(payment).tx_blob;
};

const decodeBlob = (blob: string): Record<string, unknown> => {
  if (!/^(?:[0-9A-Fa-f]{2})+$/.test(blob)) throw new InvalidTransactionError('a tx_blob is hex');
  let fields: Record<string, unknown>;
  try {
    fields = decode(blob);
    // a blob that does not re-encode to itself is not canonical: rippled would not take it as signed
    if (encode(fields as unknown as Payment) !== blob.toUpperCase()) throw new Error('not canonical');
  } catch (error) {
    throw new InvalidTransactionError(`malformed tx_blob: ${error instanceof Error ? error.message : String(error)}`);
  }
  return fields;
};

const verifiedSigner = (blob: string, fields: Record<string, unknown>): string => {
  if (fields.Signers !== undefined) throw new InvalidTransactionError('multi-signed transactions are not accepted');
  const { SigningPubKey: signingKey, Account: account } = fields;
  if (typeof signingKey !== 'string' || signingKey === '' || typeof account !== 'string') throw new InvalidTransactionError('no signing key');
  let valid: boolean;
  try {
    valid = verifySignature(blob);
  } catch (error) {
    throw new InvalidTransactionError(`unverifiable signature: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!valid) throw new InvalidTransactionError('the signature does not verify');
  // a regular key's authority is ledger state: offline, only the master key proves the account signed
  if (deriveAddress(signingKey) !== account) throw new InvalidTransactionError('not signed by the account\'s master key');
  return account;
};

const drops = (value: unknown, what: string): bigint => {
  // an object is an issued-currency (or MPT) amount: only XRP itself is a string of drops
  if (typeof value !== 'string' || !DROPS.test(value)) throw new InvalidTransactionError(`${what} is not an amount of XRP drops`);
  const amount = BigInt(value);
  if (amount > MAX_DROPS) throw new InvalidTransactionError(`${what} exceeds all XRP in existence`);
  return amount;
};

const decodePayment = (blob: string): DecodedTransaction => {
  const fields = decodeBlob(blob);
  if (fields.TransactionType !== 'Payment') throw new InvalidTransactionError(`not a Payment: ${String(fields.TransactionType)}`);
  // mainnet (0) and testnet (1) are legacy networks: rippled refuses transactions that name one
  if (fields.NetworkID !== undefined) throw new InvalidTransactionError('a NetworkID has no place on XRPL mainnet or testnet');
  const from = verifiedSigner(blob, fields);
  const flags = fields.Flags ?? 0;
  if (typeof flags !== 'number' || (flags & TF_PARTIAL_PAYMENT) !== 0) throw new InvalidTransactionError('partial payments are not accepted');
  for (const field of ['SendMax', 'DeliverMin', 'Paths']) {
    if (fields[field] !== undefined) throw new InvalidTransactionError(`an XRP-to-XRP payment has no ${field}`);
  }
  const amount = drops(fields.Amount, 'Amount');
  if (amount === 0n) throw new InvalidTransactionError('a payment of nothing');
  const to = fields.Destination;
  if (typeof to !== 'string' || !isValidClassicAddress(to)) throw new InvalidTransactionError('no destination');
  const tag = fields.DestinationTag;
  if (tag !== undefined && (typeof tag !== 'number' || !isUint32(tag))) throw new InvalidTransactionError('bad destination tag');
  const sequence = fields.Sequence;
  if (typeof sequence !== 'number' || !isUint32(sequence)) throw new InvalidTransactionError('no sequence');
  return {
    hash: hashes.hashSignedTx(blob.toUpperCase()),
    from,
    transfers: [{ index: 0, from, to, asset: 'native', amount, destinationTag: tag ?? null }],
    fee: drops(fields.Fee, 'Fee'),
    nonce: sequence,
    spends: [],
  };
};

export const xrpTransactions: TransactionCodec = {
  family: 'xrp',
  decodeSignedTransaction: (raw, context) => {
    if (context.chain.family !== 'xrp') throw new InvalidTransactionError(`${context.chain.id} is not an XRP chain`);
    try {
      return decodePayment(raw);
    } catch (error) {
      if (error instanceof InvalidTransactionError) throw error;
      throw new InvalidTransactionError(`malformed XRP transaction: ${error instanceof Error ? error.message : String(error)}`);
    }
  },
};
