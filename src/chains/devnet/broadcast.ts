import { Transaction as BitcoinTransaction } from 'bitcoinjs-lib';
import { InvalidTransactionError, type ChainDefinition, type DecodedTransaction, type PreviousOutput } from '../../catalog/chain.js';
import { transactionCodecs } from '../families.js';
import type { ChainState } from './chain-state.js';
import { BITCOIN_MIN_RELAY_SAT_PER_VBYTE, scheduledFee, XRP_MIN_FEE_DROPS } from './fees.js';
import { canonicalAddress } from './hashes.js';
import { outputAt, requiresDestinationTag, WHOLE_MEMPOOL } from './ledger.js';
import { admissionRefusal, enqueue, type MempoolEntry } from './mempool.js';
import { bitcoinReplacementCheck, evictReplaced } from './replacement.js';
import type { DevnetDb } from './tables.js';
import { validityLimitOf } from './validity.js';
import { BoundedMap } from '../../lib/bounded-map.js';

/** The outcome of offering a transaction to the devnet's node: its hash, or the node's refusal. */
export type Admission = { txHash: string } | { refused: string };

/** The outputs a Bitcoin transaction spends, read before decoding: its signatures commit to their amounts. */
const previousOutputsOf = async (db: DevnetDb, chain: ChainDefinition, raw: string): Promise<Map<string, PreviousOutput>> => {
  const outputs = new Map<string, PreviousOutput>();
  let inputs: { txHash: string; index: number }[];
  try {
    inputs = BitcoinTransaction.fromHex(raw).ins.map((input) => ({ txHash: Buffer.from(input.hash).reverse().toString('hex'), index: input.index }));
  } catch {
    return outputs; // malformed: the codec says why
  }
  for (const input of inputs.slice(0, 1000)) {
    const output = await outputAt(db, chain.id, input.txHash, input.index, WHOLE_MEMPOOL);
    if (output) outputs.set(`${input.txHash}:${input.index}`, { address: output.address, amount: output.amount });
  }
  return outputs;
};

/**
 * The last transactions decoded on chains whose decoding needs their bytes alone (every family but
 * Bitcoin, whose inputs' amounts come from the chain), keyed by chain and bytes: a transaction the
 * service sends is decoded twice in a row (asked whether it can still be mined, then broadcast),
 * each time recovering its signer, an elliptic-curve computation. Bounded, and a few hundred
 * bytes an entry.
 */
const recentlyDecoded = new BoundedMap<string, DecodedTransaction>(256);

/** Decodes and verifies a signed transaction with the family's own library; InvalidTransactionError when it is not valid. */
export const decodeSigned = async (db: DevnetDb, chain: ChainDefinition, raw: string): Promise<DecodedTransaction> => {
  const key = chain.family === 'bitcoin' ? null : `${chain.id} ${raw}`;
  const known = key === null ? undefined : recentlyDecoded.get(key);
  if (known) return known;
  const previous = chain.family === 'bitcoin' ? await previousOutputsOf(db, chain, raw) : new Map<string, PreviousOutput>();
  const decoded = transactionCodecs[chain.family].decodeSignedTransaction(raw, { chain, previousOutput: (txHash, index) => previous.get(`${txHash}:${index}`) });
  const address = (value: string) => canonicalAddress(chain.family, value);
  const canonical = { ...decoded, from: address(decoded.from), transfers: decoded.transfers.map((transfer) => ({ ...transfer, from: address(transfer.from), to: address(transfer.to) })) };
  if (key !== null) recentlyDecoded.set(key, canonical);
  return canonical;
};

/**
 * The fee mining will charge (fees.ts), or why the node refuses the price; and for a TRC-20
 * transfer whose fee limit does not cover its energy, the failure it will be mined with.
 */
const priceOf = (chain: ChainDefinition, decoded: DecodedTransaction, raw: string): { fee: bigint; error: string | null } | { refused: string } => {
  const asset = decoded.transfers.find((transfer) => transfer.asset !== 'native')?.asset ?? 'native';
  switch (chain.family) {
    case 'evm': {
      const price = scheduledFee('evm', asset)!;
      if (decoded.fee < price) return { refused: `the transaction offers at most ${decoded.fee} wei of fees; the devnet charges ${price}` };
      return { fee: price, error: null };
    }
    case 'tron': {
      const price = scheduledFee('tron', asset)!;
      if (asset !== 'native' && decoded.fee < price) return { fee: decoded.fee, error: `OUT_OF_ENERGY: the fee limit ${decoded.fee} does not cover ${price} sun` };
      return { fee: price, error: null };
    }
    case 'bitcoin': {
      const minimum = BigInt(BitcoinTransaction.fromHex(raw).virtualSize()) * BITCOIN_MIN_RELAY_SAT_PER_VBYTE;
      if (decoded.fee < minimum) return { refused: `min relay fee not met: ${decoded.fee} < ${minimum} sat` };
      return { fee: decoded.fee, error: null };
    }
    case 'xrp':
      if (decoded.fee < XRP_MIN_FEE_DROPS) return { refused: `telINSUF_FEE_P: a fee of ${decoded.fee} drops is below ${XRP_MIN_FEE_DROPS}` };
      return { fee: decoded.fee, error: null };
  }
};

/** XRPL refuses a payment without a tag to an account that requires one: tecDST_TAG_NEEDED, mined as failed with the fee claimed. */
const destinationTagFailure = async (trx: DevnetDb, chain: ChainDefinition, decoded: DecodedTransaction): Promise<string | null> => {
  if (chain.family !== 'xrp') return null;
  for (const transfer of decoded.transfers) {
    if (transfer.destinationTag === null && (await requiresDestinationTag(trx, chain.id, transfer.to))) {
      return `tecDST_TAG_NEEDED: ${transfer.to} requires a destination tag`;
    }
  }
  return null;
};

/** A real node refuses a Tron transaction past its expiration and an XRP one past its LastLedgerSequence. */
const pastValidity = (state: ChainState, raw: string): string | null => {
  const limit = validityLimitOf(state.chain, raw);
  if (limit?.kind === 'expiration' && Date.parse(state.head.timestamp) > limit.atMs) return `TRANSACTION_EXPIRATION_ERROR: it expired at ${new Date(limit.atMs).toISOString()}`;
  if (limit?.kind === 'lastLedger' && state.head.number + 1 > limit.sequence) return `tefMAX_LEDGER: ledger ${state.head.number + 1} is past its LastLedgerSequence ${limit.sequence}`;
  return null;
};

/**
 * Offers a signed transaction to the chain's mempool (inside withLockedChain), as a node would:
 * decoded and verified, a known hash answered with itself, then nonce/sequence, funds, unspent
 * inputs and fee checked; on Bitcoin a BIP125 replacement evicts the pending transactions it
 * replaces (replacement.ts). Faults (when `withFaults`: a withdrawal's transaction) apply to
 * transactions that pass those checks.
 */
export const admitSigned = async (trx: DevnetDb, state: ChainState, raw: string, options: { withFaults: boolean }): Promise<Admission> => {
  const { chain } = state;
  let decoded: DecodedTransaction;
  try {
    decoded = await decodeSigned(trx, chain, raw);
  } catch (error) {
    if (error instanceof InvalidTransactionError) return { refused: error.message };
    throw error;
  }
  const known = await trx.selectFrom('devnet_transactions').select('status').where('chain_id', '=', chain.id).where('hash', '=', decoded.hash).executeTakeFirst();
  if (known && known.status !== 'dropped') return { txHash: decoded.hash };

  const expired = pastValidity(state, raw);
  if (expired) return { refused: expired };

  const price = priceOf(chain, decoded, raw);
  if ('refused' in price) return price;
  const entry: MempoolEntry = {
    hash: decoded.hash,
    kind: 'signed',
    raw,
    sender: decoded.from,
    nonce: decoded.nonce,
    fee: price.fee,
    transfers: decoded.transfers,
    spends: decoded.spends,
    error: price.error ?? (await destinationTagFailure(trx, chain, decoded)),
  };
  const replacement = await bitcoinReplacementCheck(trx, chain, entry);
  if ('refused' in replacement) return replacement;
  const refusal = await admissionRefusal(trx, chain, entry, WHOLE_MEMPOOL, replacement.replaces);
  if (refusal) return { refused: refusal };

  if (options.withFaults && state.fault && state.faultRemaining > 0) {
    const remaining = state.faultRemaining - 1;
    await trx.updateTable('devnet_chains').set({ fault_remaining: remaining, fault: remaining === 0 ? null : state.fault }).where('chain_id', '=', chain.id).execute();
    if (state.fault === 'broadcast_error') return { refused: 'the node rejected the transaction (devnet fault: broadcast_error)' };
    entry.error = 'execution reverted (devnet fault: revert)';
  }
  await evictReplaced(trx, chain.id, replacement.replaces, entry.hash);
  await enqueue(trx, chain.id, entry, known?.status === 'dropped');
  return { txHash: decoded.hash };
};
