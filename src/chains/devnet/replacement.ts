import { Transaction } from 'bitcoinjs-lib';
import { INCREMENTAL_RELAY_SAT_PER_VBYTE } from '../bitcoin/replace-by-fee.js';
import type { ChainDefinition } from '../../catalog/chain.js';
import { pendingSpendersOf } from './ledger.js';
import type { MempoolEntry } from './mempool.js';
import type { DevnetDb } from './tables.js';

/**
 * BIP125 replace-by-fee on the devnet's Bitcoin chains, as Bitcoin Core's opt-in policy has it: a
 * transaction spending an output a pending one already spends replaces it when every transaction
 * it conflicts with signals replaceability (an input's nSequence below 0xfffffffe) and it pays
 * more in absolute fees than all of them together, by at least the incremental relay fee
 * (1 sat/vB) of its own size (rules 1, 3 and 4). Otherwise it is refused: as a double spend when a
 * conflicting transaction does not signal, for its fee when it does not pay enough more.
 * Descendants of a replaced transaction lose their inputs and are dropped when the next block is mined.
 */

/** BIP125: a transaction signals replaceability when any input's nSequence is below this */
const NON_REPLACEABLE_SEQUENCE = 0xfffffffe;

export const signalsReplaceability = (raw: string): boolean => Transaction.fromHex(raw).ins.some((input) => input.sequence < NON_REPLACEABLE_SEQUENCE);

export type ReplacementCheck = { replaces: string[] } | { refused: string };

/** The pending transactions `entry` would replace, or why the node refuses it; no conflict is `{ replaces: [] }`. */
export const bitcoinReplacementCheck = async (trx: DevnetDb, chain: ChainDefinition, entry: MempoolEntry): Promise<ReplacementCheck> => {
  if (chain.family !== 'bitcoin' || entry.raw === null) return { replaces: [] };
  const conflicts = (await pendingSpendersOf(trx, chain.id, entry.spends)).filter((conflict) => conflict.hash !== entry.hash);
  if (conflicts.length === 0) return { replaces: [] };
  // one that does not signal is not replaced: the new transaction is refused as the double spend it is (mempool.ts)
  if (conflicts.some((conflict) => conflict.raw === null || !signalsReplaceability(conflict.raw))) return { replaces: [] };
  const replacedFees = conflicts.reduce((total, conflict) => total + conflict.fee, 0n);
  const required = replacedFees + BigInt(Transaction.fromHex(entry.raw).virtualSize()) * INCREMENTAL_RELAY_SAT_PER_VBYTE;
  if (entry.fee < required) {
    return { refused: `insufficient fee, rejecting replacement ${entry.hash}: it pays ${entry.fee} sat, the replaced transactions ${replacedFees} sat; at least ${required} sat needed` };
  }
  return { replaces: conflicts.map((conflict) => conflict.hash) };
};

/** The replaced transactions leave the mempool (a node forgets them: their status is "not found"). */
export const evictReplaced = async (trx: DevnetDb, chainId: string, replaced: readonly string[], by: string): Promise<void> => {
  if (replaced.length === 0) return;
  await trx
    .updateTable('devnet_transactions')
    .set({ status: 'dropped', error: `replaced by ${by} (BIP125)` })
    .where('chain_id', '=', chainId)
    .where('status', '=', 'pending')
    .where('hash', 'in', [...replaced])
    .execute();
};
