import type { KnownDeposit } from '../../application/deposits.js';
import { depositKey, type DepositRef } from '../../domain/deposit/deposit.js';

type Detection = Exclude<KnownDeposit, 'unseen'>;

/** A deposit detected and neither confirmed nor reverted yet: what the watcher still owes a verdict. */
export interface UnconfirmedDeposit {
  ref: DepositRef;
  blockNumber: number;
  blockHash: string;
  /** its DepositDetected event and that event's revision, when followed with it: the confirmation then reads nothing first */
  detection?: Detection;
}

/** The deposit events a watcher follows (src/domain/deposit), as far as it needs them. */
export type DepositEventSeen =
  | { type: 'DepositDetected'; data: DepositRef & { blockNumber: number; blockHash: string }; revision?: bigint }
  | { type: 'DepositConfirmed' | 'DepositReverted'; data: DepositRef; revision?: bigint };

/** key (depositKey) → deposit; one chain's. */
export type UnconfirmedDeposits = Map<string, UnconfirmedDeposit>;

/** Folds one deposit event of the watcher's chain into the set (mutating: the set is the watcher's own). */
export const applyDepositEvent = (deposits: UnconfirmedDeposits, event: DepositEventSeen): void => {
  const { chainId, txHash, index } = event.data;
  const ref = { chainId, txHash, index };
  if (event.type !== 'DepositDetected') {
    deposits.delete(depositKey(ref));
    return;
  }
  const detection = event.revision === undefined ? {} : { detection: { detected: event.data as Detection['detected'], revision: event.revision } };
  deposits.set(depositKey(ref), { ref, blockNumber: event.data.blockNumber, blockHash: event.data.blockHash, ...detection });
};

/** Confirmations of a transfer in `blockNumber` with the chain at `head` (its own block counts as one). */
export const confirmationsAt = (head: number, blockNumber: number): number => head - blockNumber + 1;

/** The deposits deep enough to confirm, oldest block first. */
export const dueForConfirmation = (deposits: UnconfirmedDeposits, head: number, required: number): UnconfirmedDeposit[] =>
  [...deposits.values()].filter((deposit) => confirmationsAt(head, deposit.blockNumber) >= required).sort((a, b) => a.blockNumber - b.blockNumber);

/** The deposits detected in blocks above `forkPoint`: a reorg abandoned them. */
export const abandonedAbove = (deposits: UnconfirmedDeposits, forkPoint: number): UnconfirmedDeposit[] =>
  [...deposits.values()].filter((deposit) => deposit.blockNumber > forkPoint);

/** The deposits recorded at `blockNumber` in a block other than the one now there (a reorg the cursor never saw). */
export const supersededAt = (deposits: UnconfirmedDeposits, blockNumber: number, canonicalHash: string): UnconfirmedDeposit[] =>
  [...deposits.values()].filter((deposit) => deposit.blockNumber === blockNumber && deposit.blockHash !== canonicalHash);
