import type { DomainEvent } from '../decider.js';

/** SPEC §3's statuses. */
export type WithdrawalStatus = 'Pending' | 'PendingApproval' | 'Processing' | 'Completed' | 'Failed' | 'Cancelled';

export const WITHDRAWAL_STATUSES: readonly WithdrawalStatus[] = ['Pending', 'PendingApproval', 'Processing', 'Completed', 'Failed', 'Cancelled'];

/** Bitcoin: an output a withdrawal's transaction spends (the signer needs its amount to sign a replacement). */
export interface SpentOutput {
  txHash: string;
  index: number;
  address: string;
  amount: string;
}

/**
 * Bitcoin: the payout batch a withdrawal's transaction belongs to (one transaction paying many
 * withdrawals, stream `payoutBatch-<chainId>-<id>`). The transaction's `fee` beside it is this
 * withdrawal's share; the whole transaction's fee is here.
 */
export type PayoutBatchRef = {
  id: string;
  /** the whole transaction's fee, sat */
  fee: string;
  /** how many withdrawals it pays */
  size: number;
  /** this withdrawal's output in the transaction */
  outputIndex: number;
};

/** A withdrawal's transaction as recorded before it is sent (a type, not an interface: an event's data is one). */
export type SignedTransaction = {
  raw: string;
  txHash: string;
  nonce: number | null;
  fee: string;
  signedAt: string;
  /** Bitcoin: the chain's head when it was signed (the replace-by-fee rule counts blocks from it) */
  headBlockNumber?: number;
  /** Bitcoin: the outputs it spends */
  inputs?: SpentOutput[];
  /** EVM: its EIP-1559 fee fields, wei (what a replacement must raise by 10 % each) */
  maxFeePerGas?: string;
  maxPriorityFeePerGas?: string;
  /** Bitcoin: the payout batch it pays this withdrawal in; `fee` is then this withdrawal's share */
  batch?: PayoutBatchRef;
};

/**
 * Events of `withdrawal-<id>`. The first three come from people (create, approve, cancel); the
 * others from the withdrawal processor. Amounts and fees are decimal strings of base units.
 */
export type WithdrawalEvent =
  | DomainEvent<
      'WithdrawalRequested',
      {
        id: string;
        orgId: string;
        chainId: string;
        tokenId: string;
        amount: string;
        recipient: string;
        memo: string | null;
        reference: string;
        internalNote: string;
        externalUserId: string | null;
        initiator: string;
        /** CONTRACT §4: the organization's setting when the withdrawal was created, for its whole life */
        minWithdrawalSigners: number;
        status: 'Pending' | 'PendingApproval';
        requestedAt: string;
      }
    >
  | DomainEvent<'WithdrawalApproved', { id: string; userId: string; approvers: string[]; status: 'Pending' | 'PendingApproval'; approvedAt: string }>
  | DomainEvent<'WithdrawalCancelled', { id: string; userId: string; username: string; txnError: string; cancelledAt: string }>
  /** the transaction is built, signed and recorded before it is sent: from here the withdrawal is committed to the chain */
  | DomainEvent<
      'WithdrawalTransactionSigned',
      SignedTransaction & {
        id: string;
        /**
         * Bitcoin, XRP: the network fee held on the ledger beside the amount, in total, from this
         * event on. Absent on events recorded before fees were held (only the amount was): 0.
         */
        feeHeld?: string;
      }
    >
  /**
   * The broadcast transaction stayed unconfirmed, so a replacement is signed and recorded before it
   * is sent: Bitcoin, a BIP125 one (the same inputs and recipient, a higher fee from the change);
   * EVM, the same nonce at higher EIP-1559 fees. The processor follows it from here, and whichever
   * is mined completes the withdrawal.
   */
  | DomainEvent<
      'WithdrawalTransactionReplaced',
      {
        id: string;
        raw: string;
        txHash: string;
        replacedTxHash: string;
        fee: string;
        replacedFee: string;
        headBlockNumber: number;
        /** Bitcoin */
        inputs?: SpentOutput[];
        /** EVM: the nonce it shares with the transaction it replaces, and its fee fields */
        nonce?: number;
        maxFeePerGas?: string;
        maxPriorityFeePerGas?: string;
        /** Bitcoin, XRP: the fee held in total from this event on; absent (older events): unchanged */
        feeHeld?: string;
        /** Bitcoin: the payout batch replaced as a whole; `fee` and `replacedFee` are this withdrawal's shares */
        batch?: PayoutBatchRef;
        replacedAt: string;
      }
    >
  | DomainEvent<'WithdrawalBroadcast', { id: string; txHash: string; broadcastAt: string }>
  | DomainEvent<'WithdrawalCompleted', { id: string; txHash: string; blockNumber: number; fee: string; completedAt: string }>
  | DomainEvent<'WithdrawalFailed', { id: string; txnError: string; failedAt: string }>;

export type WithdrawalRequestedData = Extract<WithdrawalEvent, { type: 'WithdrawalRequested' }>['data'];

/** A withdrawal as its events leave it: SPEC §2.2's fields and what the processor recorded. */
export interface WithdrawalRecord extends Omit<WithdrawalRequestedData, 'status' | 'requestedAt'> {
  status: WithdrawalStatus;
  approvers: string[];
  txnHash: string | null;
  txnError: string | null;
  /** the signed transaction, once recorded (the newest replacement after one): the withdrawal can no longer be cancelled */
  signedTransaction: SignedTransaction | null;
  /** the transactions a replacement superseded, oldest first (absent when none was); one of them may still be mined instead */
  replacedTransactions?: SignedTransaction[];
  /**
   * Bitcoin, XRP: the network fee held on the ledger for this withdrawal beside its amount (absent:
   * none, as for every withdrawal signed before fees were held, and on chains whose gas wallet pays)
   */
  feeHeld?: string;
  blockNumber: number | null;
  /** the network fee the chain charged, native base units (set on completion or a failure on chain) */
  fee: string | null;
  createdAt: string;
  updatedAt: string;
  /** when approvals reached minWithdrawalSigners (creation, with one signer) */
  approvedAt: string | null;
  completedAt: string | null;
  cancelledBy: string | null;
}

export type Withdrawal = { status: 'None' } | WithdrawalRecord;

export const initialWithdrawal: Withdrawal = { status: 'None' };

export const isTerminal = (status: WithdrawalStatus): boolean => status === 'Completed' || status === 'Failed' || status === 'Cancelled';

/**
 * The record a request starts, its fields named one by one: spreading the event's data into a
 * literal this size (rest and spread) made V8 build it the slow way, about 20 µs a fold, paid by
 * every POST /withdrawals and every fold of a withdrawal's stream.
 */
const requestedWithdrawal = (request: WithdrawalRequestedData): WithdrawalRecord => {
  const { status, requestedAt } = request;
  return {
    id: request.id,
    orgId: request.orgId,
    chainId: request.chainId,
    tokenId: request.tokenId,
    amount: request.amount,
    recipient: request.recipient,
    memo: request.memo,
    reference: request.reference,
    internalNote: request.internalNote,
    externalUserId: request.externalUserId,
    initiator: request.initiator,
    minWithdrawalSigners: request.minWithdrawalSigners,
    status,
    approvers: [request.initiator],
    txnHash: null,
    txnError: null,
    signedTransaction: null,
    blockNumber: null,
    fee: null,
    createdAt: requestedAt,
    updatedAt: requestedAt,
    approvedAt: status === 'Pending' ? requestedAt : null,
    completedAt: null,
    cancelledBy: null,
  };
};

export const evolveWithdrawal = (state: Withdrawal, event: WithdrawalEvent): Withdrawal => {
  if (event.type === 'WithdrawalRequested') return requestedWithdrawal(event.data);
  if (state.status === 'None') return state;
  switch (event.type) {
    case 'WithdrawalApproved': {
      const { approvers, status, approvedAt } = event.data;
      return { ...state, approvers, status, updatedAt: approvedAt, approvedAt: status === 'Pending' ? approvedAt : state.approvedAt };
    }
    case 'WithdrawalCancelled':
      return { ...state, status: 'Cancelled', txnError: event.data.txnError, cancelledBy: event.data.userId, updatedAt: event.data.cancelledAt };
    case 'WithdrawalTransactionSigned': {
      const { id: _id, feeHeld, ...signed } = event.data;
      return { ...state, signedTransaction: signed, ...(feeHeld !== undefined ? { feeHeld } : {}), updatedAt: signed.signedAt };
    }
    case 'WithdrawalTransactionReplaced': {
      if (state.signedTransaction === null) return state;
      const { raw, txHash, fee, headBlockNumber, inputs, nonce, maxFeePerGas, maxPriorityFeePerGas, feeHeld, batch, replacedAt } = event.data;
      const evmFees = maxFeePerGas !== undefined && maxPriorityFeePerGas !== undefined ? { maxFeePerGas, maxPriorityFeePerGas } : {};
      return {
        ...state,
        signedTransaction: { raw, txHash, nonce: nonce ?? null, fee, signedAt: replacedAt, headBlockNumber, ...(inputs ? { inputs } : {}), ...evmFees, ...(batch ? { batch } : {}) },
        ...(feeHeld !== undefined ? { feeHeld } : {}),
        replacedTransactions: [...(state.replacedTransactions ?? []), state.signedTransaction],
        // the hash the chain is now expected to confirm
        txnHash: state.status === 'Processing' ? txHash : state.txnHash,
        updatedAt: replacedAt,
      };
    }
    case 'WithdrawalBroadcast':
      return { ...state, status: 'Processing', txnHash: event.data.txHash, updatedAt: event.data.broadcastAt };
    case 'WithdrawalCompleted': {
      const { txHash, blockNumber, fee, completedAt } = event.data;
      return { ...state, status: 'Completed', txnHash: txHash, blockNumber, fee, completedAt, updatedAt: completedAt };
    }
    case 'WithdrawalFailed':
      return { ...state, status: 'Failed', txnError: event.data.txnError, updatedAt: event.data.failedAt };
    default: {
      const _never: never = event;
      return state;
    }
  }
};
