import type { Decider, DomainEvent } from '../decider.js';

/** A transaction of ours that pays nobody and takes what a refused transaction needs (its nonce, an input), so that one can never be mined. */
export interface CancellingTransaction {
  txHash: string;
  raw: string;
  nonce: number | null;
  from: string;
}

/**
 * Making a refused transaction impossible, recorded before the cancelling transaction is sent (like
 * every transaction of the service): a crash re-sends these bytes, never other ones. The payment it
 * cancels fails only once the chain proves, at depth, that it can never be mined; if the chain mines
 * the payment instead, the payment stands and the cancellation is moot.
 */
export type CancellationEvent = DomainEvent<
  'TransactionCancellationSigned',
  { orgId: string; chainId: string; txHash: string; refusal: string; cancellation: CancellingTransaction; signedAt: string }
>;

export type Cancellation = { status: 'None' } | { status: 'Signed'; txHash: string; refusal: string; cancellation: CancellingTransaction };

export type CancellationCommand = { type: 'SignCancellation'; orgId: string; chainId: string; txHash: string; refusal: string; cancellation: CancellingTransaction };

export const cancellationDecider: Decider<CancellationCommand, CancellationEvent, Cancellation> = {
  initialState: { status: 'None' },
  evolve: (state, event) => {
    switch (event.type) {
      case 'TransactionCancellationSigned':
        return { status: 'Signed', txHash: event.data.txHash, refusal: event.data.refusal, cancellation: event.data.cancellation };
      default: {
        const _never: never = event.type;
        return state;
      }
    }
  },
  decide: (command, state, { now }) => {
    switch (command.type) {
      case 'SignCancellation': {
        // one cancellation per transaction: a second signature would be a second transaction to follow
        if (state.status === 'Signed') return [];
        const { orgId, chainId, txHash, refusal, cancellation } = command;
        return [{ type: 'TransactionCancellationSigned', data: { orgId, chainId, txHash, refusal, cancellation, signedAt: now.toISOString() } }];
      }
      default: {
        const _never: never = command.type;
        return [];
      }
    }
  },
};
