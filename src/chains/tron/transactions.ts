import { createHash } from 'node:crypto';
import { utils } from 'tronweb';
import { z } from 'zod';
import { InvalidTransactionError, type DecodedTransaction, type TransactionCodec } from '../../catalog/chain.js';
import { tronAddressFromHex, tronAddressToHex } from './address.js';

/** The block a transaction refers to (TAPOS): its height and its 32-byte block id (hex). */
export interface TronRefBlock {
  number: number;
  hash: string;
}

export interface TronTransferParams {
  /** base58 (T…) recipient */
  to: string;
  /** sun for TRX, the token's base units for TRC-20 */
  amount: bigint;
  /** absent: a TRX transfer; present: `transfer(to, amount)` on that TRC-20 contract, burning at most feeLimit sun of energy */
  trc20?: { contract: string; feeLimit: bigint };
  refBlock: TronRefBlock;
  /** milliseconds since the epoch */
  expiration: number;
  timestamp: number;
}

/** The first 4 bytes of keccak256("transfer(address,uint256)"). */
const TRC20_TRANSFER_SELECTOR = utils.ethersUtils.id('transfer(address,uint256)').slice(2, 10);
/** selector, the recipient as a 32-byte word (12 zero bytes, then 20 bytes), the amount as a 32-byte word; nothing more */
const TRC20_TRANSFER_CALL = new RegExp(`^${TRC20_TRANSFER_SELECTOR}0{24}([0-9a-f]{40})([0-9a-f]{64})$`);
const UINT256_LIMIT = 1n << 256n;

const sha256Hex = (hex: string) => createHash('sha256').update(Buffer.from(hex, 'hex')).digest('hex');

/** protobuf int64 fields travel as JS numbers in tronweb: refuse what a number cannot hold exactly */
const safeNumber = (value: bigint, what: string): number => {
  if (value < 0n || value > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`${what} out of range: ${value}`);
  return Number(value);
};

/** ref_block_bytes: bytes 6..8 of the 8-byte height; ref_block_hash: bytes 8..16 of the block id (as tronweb's builder takes them). */
const refBlockFields = (refBlock: TronRefBlock) => {
  if (!Number.isSafeInteger(refBlock.number) || refBlock.number < 0) throw new RangeError(`bad reference block number: ${refBlock.number}`);
  if (!/^[0-9a-fA-F]{64}$/.test(refBlock.hash)) throw new Error('the reference block hash must be 32 bytes of hex');
  return {
    ref_block_bytes: refBlock.number.toString(16).slice(-4).padStart(4, '0'),
    ref_block_hash: refBlock.hash.slice(16, 32).toLowerCase(),
  };
};

const contractOf = (ownerHex: string, params: TronTransferParams) => {
  const toHex = tronAddressToHex(params.to);
  if (!params.trc20) {
    if (params.amount <= 0n) throw new RangeError('a TRX transfer needs a positive amount');
    const value = { owner_address: ownerHex, to_address: toHex, amount: safeNumber(params.amount, 'amount') };
    return { type: 'TransferContract', parameter: { value, type_url: 'type.googleapis.com/protocol.TransferContract' } };
  }
  if (params.amount <= 0n || params.amount >= UINT256_LIMIT) throw new RangeError(`bad TRC-20 amount: ${params.amount}`);
  const data = TRC20_TRANSFER_SELECTOR + toHex.slice(2).padStart(64, '0') + params.amount.toString(16).padStart(64, '0');
  const value = { data, owner_address: ownerHex, contract_address: tronAddressToHex(params.trc20.contract) };
  return { type: 'TriggerSmartContract', parameter: { value, type_url: 'type.googleapis.com/protocol.TriggerSmartContract' } };
};

/** Builds and signs a TRX or TRC-20 transfer offline; returns the JSON a node's broadcasttransaction takes. */
export const signTronTransfer = (privateKey: Uint8Array, params: TronTransferParams): string => {
  if (privateKey.length !== 32) throw new Error('a secp256k1 private key has 32 bytes');
  if (!Number.isSafeInteger(params.timestamp) || !Number.isSafeInteger(params.expiration) || params.timestamp <= 0 || params.expiration <= params.timestamp) {
    throw new RangeError('expiration must come after a positive timestamp (milliseconds)');
  }
  if (params.trc20 && params.trc20.feeLimit <= 0n) throw new RangeError('a TRC-20 transfer needs a positive fee limit');
  const privateKeyHex = Buffer.from(privateKey).toString('hex');
  const ownerHex = Buffer.from(utils.crypto.getAddressFromPriKey(privateKey)).toString('hex');
  const raw_data = {
    contract: [contractOf(ownerHex, params)],
    ...refBlockFields(params.refBlock),
    expiration: params.expiration,
    timestamp: params.timestamp,
    ...(params.trc20 ? { fee_limit: safeNumber(params.trc20.feeLimit, 'fee limit') } : {}),
  };
  const raw_data_hex = utils.transaction.txPbToRawDataHex(utils.transaction.txJsonToPb({ raw_data })).toLowerCase();
  const txID = sha256Hex(raw_data_hex);
  const signed = utils.crypto.signTransaction(privateKeyHex, { txID, raw_data, raw_data_hex });
  // tronweb writes the recovery byte in uppercase hex (…1C): keep the whole signature lowercase
  return JSON.stringify({ txID, raw_data, raw_data_hex, signature: signed.signature.map((signature) => signature.toLowerCase()) });
};

const hex = (length?: number) => z.string().regex(length ? new RegExp(`^[0-9a-fA-F]{${length}}$`) : /^(?:[0-9a-fA-F]{2})+$/);

const signedTransactionSchema = z.object({
  txID: hex(64),
  raw_data: z.looseObject({
    contract: z.array(z.looseObject({ type: z.enum(['TransferContract', 'TriggerSmartContract']) })).length(1),
  }),
  raw_data_hex: hex(),
  /** one owner signature: r ‖ s ‖ v */
  signature: z.array(hex(130)).length(1),
  visible: z.boolean().optional(),
});

/** The fields of raw_data_hex as tronweb's deserializer gives them (hex in uppercase, int64 as numbers). */
const signedContractSchema = z.object({
  contract: z.tuple([
    z.object({
      Permission_id: z.number(),
      parameter: z.object({
        value: z.object({
          owner_address: z.string(),
          to_address: z.string().optional(),
          amount: z.number().optional(),
          contract_address: z.string().optional(),
          data: z.string().optional(),
          call_value: z.number().optional(),
          call_token_value: z.number().optional(),
          token_id: z.number().optional(),
        }),
      }),
    }),
  ]),
  fee_limit: z.number(),
});

/** a signed transaction's JSON as `schema` reads it; InvalidTransactionError when it is not that */
const parseSigned = <T>(raw: string, schema: z.ZodType<T>): T => {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new InvalidTransactionError('not JSON');
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new InvalidTransactionError(`not a signed Tron transaction: ${parsed.error.issues[0]?.message}`);
  return parsed.data;
};

const decode = (raw: string): DecodedTransaction => {
  const tx = parseSigned(raw, signedTransactionSchema);
  const rawDataHex = tx.raw_data_hex.toLowerCase();
  const txID = tx.txID.toLowerCase();

  // the JSON must say exactly what the signed bytes say: re-encode it with tronweb's protobuf
  const reencoded = utils.transaction.txPbToRawDataHex(utils.transaction.txJsonToPb({ raw_data: tx.raw_data, visible: tx.visible })).toLowerCase();
  if (reencoded !== rawDataHex) throw new InvalidTransactionError('raw_data does not match raw_data_hex');
  if (sha256Hex(rawDataHex) !== txID) throw new InvalidTransactionError('txID is not the sha256 of raw_data');

  // every value below comes from the signed bytes, not from the JSON
  const type = tx.raw_data.contract[0]!.type;
  const signed = signedContractSchema.parse(utils.deserializeTx.deserializeTransaction(type, rawDataHex));
  const contract = signed.contract[0];
  if (contract.Permission_id !== 0) throw new InvalidTransactionError('only owner-permission transactions are accepted');
  const value = contract.parameter.value;
  const owner = value.owner_address.toLowerCase();
  if (utils.crypto.ecRecover(txID, tx.signature[0]!).toLowerCase() !== owner) {
    throw new InvalidTransactionError('the signature is not by the owner');
  }
  const from = tronAddressFromHex(owner);
  const common = { hash: txID, from, nonce: null, spends: [] };

  if (type === 'TransferContract') {
    if (value.to_address === undefined || value.amount === undefined) throw new InvalidTransactionError('incomplete TRX transfer');
    if (!Number.isSafeInteger(value.amount) || value.amount <= 0) throw new InvalidTransactionError('bad TRX amount');
    const to = tronAddressFromHex(value.to_address);
    // bandwidth (and a new account's activation) depend on chain state, not on the raw transaction: it states no fee
    return { ...common, fee: 0n, transfers: [{ index: 0, from, to, asset: 'native', amount: BigInt(value.amount), destinationTag: null }] };
  }

  if (value.contract_address === undefined || value.data === undefined) throw new InvalidTransactionError('incomplete contract call');
  if (value.call_value || value.call_token_value || value.token_id) throw new InvalidTransactionError('a TRC-20 transfer sends no TRX or TRC-10 along');
  const call = TRC20_TRANSFER_CALL.exec(value.data.toLowerCase());
  if (!call) throw new InvalidTransactionError('not a TRC-20 transfer(address,uint256) call');
  const to = tronAddressFromHex(`41${call[1]}`);
  const asset = tronAddressFromHex(value.contract_address);
  // the fee limit bounds the TRX burnt for energy; what is actually burnt depends on chain state
  return { ...common, fee: BigInt(signed.fee_limit), transfers: [{ index: 0, from, to, asset, amount: BigInt(`0x${call[2]}`), destinationTag: null }] };
};

const rawDataHexSchema = z.object({ raw_data_hex: hex() });

/**
 * The hash of a signed Tron transaction, the sha256 of its raw_data_hex, without verifying it
 * (what decoding does: a protobuf re-encoding, a deserialization and a signer recovery): for the
 * service's own transactions, just signed, whose hash is recorded before they are sent.
 */
const tronTransactionHash = (raw: string): string => sha256Hex(parseSigned(raw, rawDataHexSchema).raw_data_hex);

export const tronTransactions: TransactionCodec = {
  family: 'tron',
  hashOfSigned: tronTransactionHash,
  decodeSignedTransaction: (raw, context) => {
    if (context.chain.family !== 'tron') throw new InvalidTransactionError(`${context.chain.id} is not a Tron chain`);
    try {
      return decode(raw);
    } catch (error) {
      if (error instanceof InvalidTransactionError) throw error;
      // tronweb's protobuf and base58 helpers throw plain errors on malformed input
      throw new InvalidTransactionError(`malformed Tron transaction: ${error instanceof Error ? error.message : String(error)}`);
    }
  },
};
