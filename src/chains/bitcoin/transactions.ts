import ecc from '@bitcoinerlab/secp256k1';
import { address, payments, Psbt, script, Transaction, type Signer as PsbtSigner } from 'bitcoinjs-lib';
import { InvalidTransactionError, type ChainNetwork, type DecodedTransfer, type PreviousOutput, type TransactionCodec } from '../../catalog/chain.js';
import { bitcoinNetwork, outputScriptOf } from './address.js';
import { BroadcastRejectedError } from '../gateway.js';

/** Outputs below this are refused by nodes' relay policy (the classic P2PKH dust limit, used for every output). */
export const DUST_LIMIT_SATS = 546n;

export interface BitcoinInputToSign {
  /** the txid of the transaction holding the output, as explorers show it */
  txHash: string;
  index: number;
  amount: bigint;
  /** the key of the P2WPKH address holding the output */
  privateKey: Uint8Array;
  /** nSequence; absent: final (0xffffffff). A replacement sets BIP125's 0xfffffffd (replace-by-fee.ts) */
  sequence?: number;
}

export interface BitcoinOutput {
  address: string;
  amount: bigint;
}

const sum = (amounts: bigint[]) => amounts.reduce((total, amount) => total + amount, 0n);

const compressedPublicKeyOf = (privateKey: Uint8Array): Uint8Array => {
  const publicKey = ecc.pointFromScalar(privateKey, true);
  if (!publicKey) throw new Error('not a valid secp256k1 private key');
  return publicKey;
};

/** What bitcoinjs asks of a key; low-S, RFC 6979 signatures from the secp256k1 backend. */
const psbtSignerOf = (privateKey: Uint8Array): PsbtSigner => ({
  publicKey: compressedPublicKeyOf(privateKey),
  sign: (hash) => ecc.sign(hash, privateKey),
});

/** Spends P2WPKH outputs to the given outputs; whatever the outputs leave of the inputs is the fee. */
export const signBitcoinTransfer = (request: { network: ChainNetwork; inputs: BitcoinInputToSign[]; outputs: BitcoinOutput[] }): { raw: string; txHash: string } => {
  const { network, inputs, outputs } = request;
  if (inputs.length === 0 || outputs.length === 0) throw new RangeError('a transaction needs at least one input and one output');
  const belowDust = outputs.find((output) => output.amount < DUST_LIMIT_SATS);
  if (belowDust) throw new RangeError(`output to ${belowDust.address} of ${belowDust.amount} sat is below the dust limit of ${DUST_LIMIT_SATS}`);
  const inputTotal = sum(inputs.map((input) => input.amount));
  const outputTotal = sum(outputs.map((output) => output.amount));
  if (inputTotal < outputTotal) throw new RangeError(`inputs (${inputTotal} sat) do not cover outputs (${outputTotal} sat)`);

  const psbt = new Psbt({ network: bitcoinNetwork(network) });
  for (const input of inputs) {
    const { output } = payments.p2wpkh({ pubkey: compressedPublicKeyOf(input.privateKey), network: bitcoinNetwork(network) });
    if (!output) throw new Error('no P2WPKH script for the input key');
    psbt.addInput({ hash: input.txHash, index: input.index, witnessUtxo: { script: output, value: input.amount }, ...(input.sequence === undefined ? {} : { sequence: input.sequence }) });
  }
  for (const output of outputs) {
    const outputScript = outputScriptOf(output.address, network);
    if (!outputScript) throw new RangeError(`${output.address} is not a Bitcoin ${network} address`);
    psbt.addOutput({ script: outputScript, value: output.amount });
  }
  inputs.forEach((input, inputIndex) => psbt.signInput(inputIndex, psbtSignerOf(input.privateKey)));
  psbt.finalizeAllInputs();
  // extractTransaction also refuses an absurd fee rate (bitcoinjs' default ceiling), a guard against swapped amounts
  const transaction = psbt.extractTransaction();
  return { raw: transaction.toHex(), txHash: transaction.getId() };
};

const parse = (raw: string): Transaction => {
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(raw)) throw new InvalidTransactionError('a Bitcoin transaction is an even-length hex string');
  try {
    return Transaction.fromHex(raw);
  } catch (error) {
    throw new InvalidTransactionError(`malformed Bitcoin transaction: ${(error as Error).message}`);
  }
};

const sameBytes = (left: Uint8Array, right: Uint8Array) => Buffer.from(left).equals(right);

/** Input `inputIndex` must be a P2WPKH spend of `previous`, signed (BIP143) by the key of its address. */
const verifyP2wpkhInput = (transaction: Transaction, inputIndex: number, previous: PreviousOutput, network: ChainNetwork) => {
  const input = transaction.ins[inputIndex]!;
  const refuse = (reason: string): never => {
    throw new InvalidTransactionError(`input ${inputIndex}: ${reason}`);
  };
  const previousScript = outputScriptOf(previous.address, network) ?? refuse(`the spent output's address ${previous.address} is not a ${network} address`);
  if (input.script.length !== 0) refuse('a native segwit spend has an empty scriptSig');
  if (input.witness.length !== 2) refuse('the witness is not a P2WPKH witness (signature, public key)');
  const [encodedSignature, publicKey] = input.witness as [Uint8Array, Uint8Array];

  let payment: payments.Payment;
  try {
    payment = payments.p2wpkh({ pubkey: publicKey, network: bitcoinNetwork(network) });
  } catch {
    return refuse('the witness public key is not a compressed secp256k1 key');
  }
  if (!payment.output || !payment.hash || !sameBytes(payment.output, previousScript)) refuse(`the witness key does not own ${previous.address}`);

  let signature: ReturnType<typeof script.signature.decode>;
  try {
    signature = script.signature.decode(encodedSignature);
  } catch {
    return refuse('the signature is not strict DER with a valid hash type');
  }
  // BIP143's script code for P2WPKH is the P2PKH script of the key hash; the amount is part of the digest
  const scriptCode = payments.p2pkh({ hash: payment.hash }).output!;
  const digest = transaction.hashForWitnessV0(inputIndex, scriptCode, previous.amount, signature.hashType);
  if (!ecc.verify(digest, publicKey, signature.signature, true)) refuse('the signature does not verify');
  return address.fromOutputScript(previousScript, bitcoinNetwork(network));
};

const txidOf = (hashInInput: Uint8Array) => Buffer.from(hashInInput).reverse().toString('hex');

export const bitcoinTransactions: TransactionCodec = {
  family: 'bitcoin',
  decodeSignedTransaction: (raw, { chain, previousOutput }) => {
    const transaction = parse(raw);
    if (transaction.ins.length === 0 || transaction.outs.length === 0) throw new InvalidTransactionError('a transaction needs inputs and outputs');
    if (!previousOutput) throw new InvalidTransactionError('verifying a Bitcoin transaction needs the outputs it spends');

    const spends: { txHash: string; index: number }[] = [];
    const spentAddresses: string[] = [];
    let inputTotal = 0n;
    transaction.ins.forEach((input, inputIndex) => {
      const spend = { txHash: txidOf(input.hash), index: input.index };
      if (spends.some((seen) => seen.txHash === spend.txHash && seen.index === spend.index)) {
        throw new InvalidTransactionError(`input ${inputIndex} spends ${spend.txHash}:${spend.index} a second time`);
      }
      const previous = previousOutput(spend.txHash, spend.index);
      if (!previous) throw new InvalidTransactionError(`input ${inputIndex} spends an unknown output ${spend.txHash}:${spend.index}`);
      spentAddresses.push(verifyP2wpkhInput(transaction, inputIndex, previous, chain.network));
      spends.push(spend);
      inputTotal += previous.amount;
    });

    const from = spentAddresses[0]!;
    const transfers: DecodedTransfer[] = [];
    transaction.outs.forEach((output, vout) => {
      let to: string;
      try {
        to = address.fromOutputScript(output.script, bitcoinNetwork(chain.network));
      } catch {
        return; // OP_RETURN and other scripts without an address pay no one a transfer could name
      }
      transfers.push({ index: vout, from, to, asset: 'native', amount: output.value, destinationTag: null });
    });
    const fee = inputTotal - sum(transaction.outs.map((output) => output.value));
    if (fee < 0n) throw new InvalidTransactionError(`the outputs spend ${-fee} sat more than the inputs hold`);
    return { hash: transaction.getId(), from, transfers, fee, nonce: null, spends };
  },
};

/** The txid of a signed transaction about to be sent; what is no Bitcoin transaction is refused before any node sees it. */
export const txidToBroadcast = (raw: string): string => {
  try {
    return Transaction.fromHex(raw).getId();
  } catch (error) {
    throw new BroadcastRejectedError(`not a Bitcoin transaction: ${(error as Error).message}`);
  }
};
